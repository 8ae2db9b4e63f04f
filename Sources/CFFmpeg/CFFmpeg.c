// FFmpeg through dlopen (CDynamicLibrary): see include/CFFmpeg.h.

#include "CFFmpeg.h"

#include "CDynamicLibrary.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <xmmintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/mathematics.h>
#include <libavutil/samplefmt.h>

// MARK: Loading

static struct {
    __typeof__(av_frame_alloc) *frame_alloc;
    __typeof__(av_frame_free) *frame_free;
    __typeof__(av_frame_unref) *frame_unref;
    __typeof__(av_strerror) *strerror_;
    __typeof__(av_log_set_level) *log_set_level;
    __typeof__(av_rescale_q) *rescale_q;
    __typeof__(av_get_bytes_per_sample) *bytes_per_sample;
    __typeof__(av_sample_fmt_is_planar) *is_planar;
    __typeof__(av_max_alloc) *max_alloc;
    __typeof__(avcodec_find_decoder_by_name) *find_decoder_by_name;
    __typeof__(avcodec_alloc_context3) *codec_alloc;
    __typeof__(avcodec_parameters_to_context) *parameters_to_context;
    __typeof__(avcodec_open2) *codec_open;
    __typeof__(avcodec_send_packet) *send_packet;
    __typeof__(avcodec_receive_frame) *receive_frame;
    __typeof__(avcodec_flush_buffers) *flush_buffers;
    __typeof__(avcodec_free_context) *codec_free;
    __typeof__(avcodec_get_name) *codec_name;
    __typeof__(avcodec_descriptor_get) *descriptor_get;
    __typeof__(av_packet_alloc) *packet_alloc;
    __typeof__(av_packet_free) *packet_free;
    __typeof__(av_packet_unref) *packet_unref;
    __typeof__(av_probe_input_buffer2) *probe_input;
    __typeof__(avformat_open_input) *open_input;
    __typeof__(avformat_find_stream_info) *find_stream_info;
    __typeof__(av_find_best_stream) *find_best_stream;
    __typeof__(av_read_frame) *read_frame;
    __typeof__(av_seek_frame) *seek_frame;
    __typeof__(avformat_close_input) *close_input;
    __typeof__(avformat_alloc_context) *format_alloc;
    __typeof__(avio_alloc_context) *io_alloc;
    __typeof__(avio_context_free) *io_free;
    __typeof__(av_malloc) *malloc_;
    __typeof__(av_freep) *freep;
    __typeof__(av_strdup) *strdup_;
    __typeof__(av_find_input_format) *find_input_format;
} ff;

/// The most FFmpeg may allocate in one block (its default is 2 GiB). A broken MP4 whose `stco`
/// claims 2^27 chunks makes the demuxer ask for 1 GiB at once before it finds that the file
/// holds 20 bytes of them: address space a 32-bit system cannot spare while the rest of reeld
/// allocates. The largest real need is the index of a long MP4, 24 bytes a packet: 512 MiB is
/// an AAC audiobook of about 130 hours in one file.
static const size_t max_allocation = (size_t)512 << 20;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *load_error;
static char load_error_text[512];
static int loaded;

static void *open_library(const char *name) {
    void *library = reel_library_open(name, load_error_text, sizeof load_error_text);
    if (library == NULL) load_error = load_error_text;
    return library;
}

/// Finds `symbols` in `library`; false (with `load_error` set) when one is missing.
static int find_functions(void *library, const reel_library_symbol *symbols, size_t count) {
    if (reel_library_find(library, "FFmpeg", symbols, count, load_error_text, sizeof load_error_text) == 0) return 1;
    load_error = load_error_text;
    return 0;
}

static void load(void) {
    void *avutil = open_library(REEL_FF_AVUTIL);
    void *avcodec = avutil != NULL ? open_library(REEL_FF_AVCODEC) : NULL;
    void *avformat = avcodec != NULL ? open_library(REEL_FF_AVFORMAT) : NULL;
    // What the loader touched relocating FFmpeg's libraries and every codec library Debian's
    // FFmpeg is built with (some 125), most of it never run, goes back
    // (`reel_loaded_pages_release`).
    if (avformat != NULL) reel_loaded_pages_release();
    if (avformat == NULL) return;
    const reel_library_symbol avutil_functions[] = {
        REEL_SYMBOL(ff.frame_alloc, "av_frame_alloc"),
        REEL_SYMBOL(ff.frame_free, "av_frame_free"),
        REEL_SYMBOL(ff.frame_unref, "av_frame_unref"),
        REEL_SYMBOL(ff.strerror_, "av_strerror"),
        REEL_SYMBOL(ff.log_set_level, "av_log_set_level"),
        REEL_SYMBOL(ff.rescale_q, "av_rescale_q"),
        REEL_SYMBOL(ff.bytes_per_sample, "av_get_bytes_per_sample"),
        REEL_SYMBOL(ff.is_planar, "av_sample_fmt_is_planar"),
        REEL_SYMBOL(ff.max_alloc, "av_max_alloc"),
        REEL_SYMBOL(ff.malloc_, "av_malloc"),
        REEL_SYMBOL(ff.freep, "av_freep"),
        REEL_SYMBOL(ff.strdup_, "av_strdup"),
    };
    const reel_library_symbol avcodec_functions[] = {
        REEL_SYMBOL(ff.find_decoder_by_name, "avcodec_find_decoder_by_name"),
        REEL_SYMBOL(ff.codec_alloc, "avcodec_alloc_context3"),
        REEL_SYMBOL(ff.parameters_to_context, "avcodec_parameters_to_context"),
        REEL_SYMBOL(ff.codec_open, "avcodec_open2"),
        REEL_SYMBOL(ff.send_packet, "avcodec_send_packet"),
        REEL_SYMBOL(ff.receive_frame, "avcodec_receive_frame"),
        REEL_SYMBOL(ff.flush_buffers, "avcodec_flush_buffers"),
        REEL_SYMBOL(ff.codec_free, "avcodec_free_context"),
        REEL_SYMBOL(ff.codec_name, "avcodec_get_name"),
        REEL_SYMBOL(ff.descriptor_get, "avcodec_descriptor_get"),
        REEL_SYMBOL(ff.packet_alloc, "av_packet_alloc"),
        REEL_SYMBOL(ff.packet_free, "av_packet_free"),
        REEL_SYMBOL(ff.packet_unref, "av_packet_unref"),
    };
    const reel_library_symbol avformat_functions[] = {
        REEL_SYMBOL(ff.probe_input, "av_probe_input_buffer2"),
        REEL_SYMBOL(ff.open_input, "avformat_open_input"),
        REEL_SYMBOL(ff.find_stream_info, "avformat_find_stream_info"),
        REEL_SYMBOL(ff.find_best_stream, "av_find_best_stream"),
        REEL_SYMBOL(ff.read_frame, "av_read_frame"),
        REEL_SYMBOL(ff.seek_frame, "av_seek_frame"),
        REEL_SYMBOL(ff.close_input, "avformat_close_input"),
        REEL_SYMBOL(ff.format_alloc, "avformat_alloc_context"),
        REEL_SYMBOL(ff.io_alloc, "avio_alloc_context"),
        REEL_SYMBOL(ff.io_free, "avio_context_free"),
        REEL_SYMBOL(ff.find_input_format, "av_find_input_format"),
    };
    if (!find_functions(avutil, avutil_functions, sizeof avutil_functions / sizeof *avutil_functions) ||
        !find_functions(avcodec, avcodec_functions, sizeof avcodec_functions / sizeof *avcodec_functions) ||
        !find_functions(avformat, avformat_functions, sizeof avformat_functions / sizeof *avformat_functions))
        return;
    // Errors come back as values with a sentence; FFmpeg's own messages would go to stderr.
    ff.log_set_level(AV_LOG_QUIET);
    ff.max_alloc(max_allocation);
    __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
}

const char *reel_ff_load(void) {
    pthread_once(&once, load);
    return load_error;
}

int reel_ff_loaded(void) {
    return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE);
}

int reel_ff_has_decoder(const char *name) {
    if (reel_ff_load() != NULL) return 0;
    return ff.find_decoder_by_name(name) != NULL;
}

// MARK: Decoding

/// Frames decoded before a seek's target by lossy codecs, whose first frame after a jump needs
/// the one before it (AAC's and WMA's overlapping transforms): enough for HE-AAC's 2048-sample
/// frames twice over.
static const int64_t lossy_preroll = 8192;

/// Packets the decoder may refuse in a row as broken before the file counts as corrupt.
static const int max_bad_packets = 64;

/// The pages opening a stream's decoder touched go back (`reel_loaded_pages_release`) once it
/// has handed out this many seconds of audio and its first read is a second old: not at its
/// first read, where the release and the faults that bring back the code decoding and playing
/// run came before the first sound. A stream's decoding thread fills its ring (2.2 s) and the
/// device's buffer within milliseconds of its first read, so the release comes with seconds of
/// audio ahead. A file's decoder hands its pages back at its first read, before it is heard: its
/// reader hands out audio only as it is played (the device's buffer ahead), and a release then,
/// on a slow core, made the device run dry (CPUQuotaPlaybackTests, an AAC file on a tenth of a
/// core with every thread in the quota: an underrun 3.5 s in).
static const int64_t pages_released_after_seconds = 3;
static const long long pages_released_after_nanoseconds = 1000000000LL;

static long long monotonic_nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

struct reel_ff_decoder {
    AVFormatContext *format;
    /// Its own I/O (a stream's callback, a file's descriptor): freed here, not by FFmpeg.
    AVIOContext *io;
    reel_ff_read_callback read_callback;
    void *read_context;
    AVCodecContext *codec;
    AVPacket *packet;
    AVFrame *frame;
    int stream;
    AVRational time_base;
    reel_ff_info info;
    int lossless;
    int lossy;
    /// The stream's first timestamp (its time base), subtracted from every frame's.
    int64_t start;
    /// Where the first decoded frame says it lies (frames), subtracted from every frame's place.
    int64_t first_place;
    /// The next frame read is this one (from the first audible frame).
    int64_t position;
    /// The frame held (`frame`) and how much of it has been handed out.
    int holding;
    int offset;
    /// Frames of the held frame before `position` when it was taken: its first sample's place.
    int64_t frame_start;
    /// A seek's target not reached yet: frames before it are decoded and dropped.
    int64_t target;
    /// The demuxer has ended and the decoder was told (a NULL packet).
    int draining;
    int ended;
    /// The stream's format changed at the frame reached (a stereo ADTS stream followed by a mono
    /// one): reads fail from there on, until a seek.
    int changed;
    /// Frames handed out since it opened, CLOCK_MONOTONIC at its first read (0 before), and
    /// whether the pages opening it touched were handed back (`pages_released_after_seconds`:
    /// `reel_ff_pages_released`).
    int64_t handed_out;
    long long first_read;
    int pages_released;
    /// A file's descriptor, read through its own I/O (`reel_ff_open`); -1 for a stream.
    int file;
    /// A live stream (`reel_ff_open_stream` not `bounded`): not ended by its container's length.
    int unbounded;
    /// The byte position of the last packet sent to the decoder (-1: none known) and its order
    /// among the packets at that position: what each packet's `pos` is replaced by (`place_key`).
    int64_t last_position;
    int64_t position_index;
    char codec_name[64];
    char container_name[128];
    /// Timed metadata demuxed and not taken yet (`reel_ff_take_timed_id3`), oldest first.
    struct timed_id3 {
        uint8_t *data;
        int64_t size;
        /// Its presentation time in the audio stream's time base from the stream's start, or
        /// AV_NOPTS_VALUE.
        int64_t time;
    } timed_id3[8];
    int timed_id3_count;
    /// The demuxer has a timed-ID3 stream.
    int has_timed_id3;
};

static void describe(int code, char *message, size_t size) {
    if (message == NULL || size == 0) return;
    if (code == AVERROR(ENOMEM)) {
        snprintf(message, size, "it asks for more than %zu MiB of memory at once", max_allocation >> 20);
        return;
    }
    char text[AV_ERROR_MAX_STRING_SIZE] = {0};
    if (ff.strerror_(code, text, sizeof text) < 0) snprintf(text, sizeof text, "error %d", code);
    snprintf(message, size, "%s", text);
}

static reel_ff_status status_of(int code) {
    if (code == AVERROR(ENOENT) || code == AVERROR(EACCES) || code == AVERROR(EISDIR) || code == AVERROR(EIO) ||
        code == AVERROR(EPERM) || code == AVERROR(ENOTDIR)) {
        return REEL_FF_IO;
    }
    return REEL_FF_CORRUPT;
}

/// A stream's AVIOContext and its buffer (which FFmpeg may have replaced by a larger one).
static void free_io(reel_ff_decoder *decoder) {
    if (decoder->io == NULL) return;
    ff.freep(&decoder->io->buffer);
    ff.io_free(&decoder->io);
}

void reel_ff_close(reel_ff_decoder *decoder) {
    if (decoder == NULL) return;
    for (int i = 0; i < decoder->timed_id3_count; i++) free(decoder->timed_id3[i].data);
    if (decoder->frame != NULL) ff.frame_free(&decoder->frame);
    if (decoder->packet != NULL) ff.packet_free(&decoder->packet);
    if (decoder->codec != NULL) ff.codec_free(&decoder->codec);
    if (decoder->format != NULL) ff.close_input(&decoder->format);
    free_io(decoder);
    if (decoder->file >= 0) close(decoder->file);
    // Read from, and closed before it had handed out enough to hand its pages back (a short
    // file, a stream stopped early): what opening it touched goes back now.
    int release = decoder->handed_out > 0 && !decoder->pages_released;
    free(decoder);
    if (release) reel_loaded_pages_release();
}

/// 16-bit output for 16-bit sources and lossy ones (as the native decoders do: MP3, Vorbis),
/// 32-bit for 24- and 32-bit sources and floating-point lossless or high-resolution ones (DSD).
static int output_bits(enum AVSampleFormat format, int lossy) {
    switch (format) {
    case AV_SAMPLE_FMT_U8:
    case AV_SAMPLE_FMT_U8P:
    case AV_SAMPLE_FMT_S16:
    case AV_SAMPLE_FMT_S16P:
        return 16;
    case AV_SAMPLE_FMT_FLT:
    case AV_SAMPLE_FMT_FLTP:
    case AV_SAMPLE_FMT_DBL:
    case AV_SAMPLE_FMT_DBLP:
        return lossy ? 16 : 32;
    default:
        return 32;
    }
}

static int next_frame(reel_ff_decoder *decoder, char *message, size_t size);
static int64_t frame_place(const reel_ff_decoder *decoder, const AVFrame *frame);

/// A rate and a channel count a stream may have (up to 64 channels, DSD512's 1536 kHz as bytes),
/// from 1 kHz, below any codec's lowest (4 or 8 kHz): a broken ALAC cookie may say 1 Hz.
static int sane_format(int rate, int channels) {
    return rate >= 1000 && rate <= 1536000 && channels > 0 && channels <= 64;
}

/// Allocates a decoder, or says why not.
static reel_ff_decoder *new_decoder(reel_ff_status *status, char *message, size_t size) {
    const char *why = reel_ff_load();
    if (why != NULL) {
        *status = REEL_FF_NOT_LOADED;
        snprintf(message, size, "%s", why);
        return NULL;
    }
    reel_ff_decoder *decoder = calloc(1, sizeof *decoder);
    if (decoder == NULL) {
        *status = REEL_FF_IO;
        snprintf(message, size, "out of memory");
        return NULL;
    }
    decoder->target = -1;
    decoder->file = -1;
    decoder->last_position = -1;
    return decoder;
}

/// What avformat_open_input's failure `code` means, into `status` and `message`.
static void open_failed(int code, reel_ff_status *status, char *message, size_t size) {
    *status = code == AVERROR_INVALIDDATA ? REEL_FF_UNKNOWN_FORMAT : status_of(code);
    if (code == AVERROR_INVALIDDATA) {
        snprintf(message, size, "not a format FFmpeg knows");
    } else {
        describe(code, message, size);
    }
}

static reel_ff_decoder *finish_open(reel_ff_decoder *decoder, reel_ff_status *status, char *message, size_t size);
static void refuse_guess(const AVInputFormat *guess, int score, const char *why, reel_ff_status *status, char *message,
                         size_t size);

/// A file's bytes for FFmpeg, through its descriptor (`reel_ff_open`).
static int read_file(void *opaque, uint8_t *buffer, int size) {
    reel_ff_decoder *decoder = opaque;
    for (;;) {
        ssize_t count = read(decoder->file, buffer, (size_t)size);
        if (count > 0) return (int)count;
        if (count == 0) return AVERROR_EOF;
        if (errno != EINTR) return AVERROR(errno);
    }
}

static int64_t seek_file(void *opaque, int64_t offset, int whence) {
    reel_ff_decoder *decoder = opaque;
    if (whence == AVSEEK_SIZE) {
        struct stat status;
        return fstat(decoder->file, &status) == 0 ? (int64_t)status.st_size : AVERROR(errno);
    }
    off_t at = lseek(decoder->file, (off_t)offset, whence & ~AVSEEK_FORCE);
    return at < 0 ? AVERROR(errno) : (int64_t)at;
}

static int refuse_io_open(AVFormatContext *format, AVIOContext **io, const char *url, int flags, AVDictionary **options);

/// What a demuxer may open besides the bytes it is given: nothing. FFmpeg's HLS, concat,
/// playlist and image-sequence demuxers open the paths and URLs their input names (an .m3u8 or
/// an ffconcat file naming /etc/passwd, or a file outside the media roots): `io_open` refuses
/// them, and the protocol whitelist (copied into a demuxer that opens another one, as concat
/// does) names no protocol.
static int refuse_other_files(reel_ff_decoder *decoder, reel_ff_status *status, char *message, size_t size) {
    decoder->format->pb = decoder->io;
    decoder->format->flags |= AVFMT_FLAG_CUSTOM_IO;
    decoder->format->io_open = refuse_io_open;
    decoder->format->protocol_whitelist = ff.strdup_("none");
    if (decoder->format->protocol_whitelist == NULL) {
        *status = REEL_FF_IO;
        snprintf(message, size, "out of memory");
        return -1;
    }
    return 0;
}

/// The size of a file's and a stream's I/O buffer (FFmpeg's own default).
static const int io_buffer_size = 32768;

reel_ff_decoder *reel_ff_open(const char *path, reel_ff_status *status, char *message, size_t size) {
    reel_ff_decoder *decoder = new_decoder(status, message, size);
    if (decoder == NULL) return NULL;
    // The file is read through its own I/O, so that the demuxer can open nothing else.
    decoder->file = open(path, O_RDONLY | O_CLOEXEC);
    if (decoder->file < 0) {
        open_failed(AVERROR(errno), status, message, size);
        reel_ff_close(decoder);
        return NULL;
    }
    unsigned char *buffer = ff.malloc_(io_buffer_size);
    decoder->format = ff.format_alloc();
    if (buffer != NULL) decoder->io = ff.io_alloc(buffer, io_buffer_size, 0, decoder, read_file, NULL, seek_file);
    if (decoder->io == NULL || decoder->format == NULL) {
        if (decoder->io == NULL) ff.freep(&buffer);
        *status = REEL_FF_IO;
        snprintf(message, size, "out of memory");
        reel_ff_close(decoder);
        return NULL;
    }
    if (refuse_other_files(decoder, status, message, size) < 0) {
        reel_ff_close(decoder);
        return NULL;
    }
    // The probe runs first, as avformat_open_input would run it, so that its score is known when
    // the demuxer it chose then refuses the file. The path names the file for the probe (its
    // suffix counts), and opens nothing.
    const AVInputFormat *guess = NULL;
    int score = ff.probe_input(decoder->io, &guess, path, NULL, 0, 0);
    if (score < 0) {
        open_failed(score, status, message, size);
        reel_ff_close(decoder);
        return NULL;
    }
    if (score < AVPROBE_SCORE_RETRY) {
        // Only a guess, as in finish_open; refused before its demuxer reads the file (random
        // bytes are "mp3" at 1 of 100 about once in 20, and that demuxer's header read then
        // fails with EINVAL).
        refuse_guess(guess, score, NULL, status, message, size);
        reel_ff_close(decoder);
        return NULL;
    }
    int code = ff.open_input(&decoder->format, path, guess, NULL);
    if (code < 0) {
        open_failed(code, status, message, size);
        // A weak guess whose demuxer refuses the file is not that format broken.
        if (score < AVPROBE_SCORE_EXTENSION && *status != REEL_FF_IO) refuse_guess(guess, score, message, status, message, size);
        decoder->format = NULL;  // avformat_open_input freed the context, not the I/O
        reel_ff_close(decoder);
        return NULL;
    }
    // Given a demuxer, avformat_open_input does not probe: the score is the probe's above.
    decoder->format->probe_score = score;
    return finish_open(decoder, status, message, size);
}

/// FFmpeg's read_packet over the caller's callback: its 0 (the end) is FFmpeg's AVERROR_EOF,
/// anything negative an I/O error.
static int read_packet(void *opaque, uint8_t *buffer, int size) {
    reel_ff_decoder *decoder = opaque;
    int count = decoder->read_callback(decoder->read_context, buffer, size);
    if (count == 0) return AVERROR_EOF;
    if (count < 0) return AVERROR(EIO);
    return count > size ? size : count;
}

/// A demuxer may open nothing else (`refuse_other_files`): a stream's bytes are a server's, and
/// a file's are what the media roots allow.
static int refuse_io_open(AVFormatContext *format, AVIOContext **io, const char *url, int flags, AVDictionary **options) {
    (void)format, (void)io, (void)url, (void)flags, (void)options;
    return AVERROR(EPERM);
}

reel_ff_decoder *reel_ff_open_stream(reel_ff_read_callback read, void *context, const char *format_name, int bounded,
                                     int64_t probe_bytes, int64_t analyze_microseconds, reel_ff_status *status,
                                     char *message, size_t size) {
    reel_ff_decoder *decoder = new_decoder(status, message, size);
    if (decoder == NULL) return NULL;
    decoder->read_callback = read;
    decoder->read_context = context;
    decoder->unbounded = !bounded;
    unsigned char *buffer = ff.malloc_(io_buffer_size);
    decoder->format = ff.format_alloc();
    if (buffer != NULL) decoder->io = ff.io_alloc(buffer, io_buffer_size, 0, decoder, read_packet, NULL, NULL);
    if (decoder->io == NULL || decoder->format == NULL) {
        if (decoder->io == NULL) ff.freep(&buffer);
        *status = REEL_FF_IO;
        snprintf(message, size, "out of memory");
        reel_ff_close(decoder);
        return NULL;
    }
    // Not seekable: what was read is gone (a live stream), so the probe and the stream's
    // analysis read ahead only as far as their bounds, and never go back further than avio's buffer.
    decoder->io->seekable = 0;
    if (refuse_other_files(decoder, status, message, size) < 0) {
        reel_ff_close(decoder);
        return NULL;
    }
    const AVInputFormat *forced = NULL;
    if (format_name != NULL && format_name[0] != '\0') {
        // The first name of a demuxer's list (`mov,mp4,m4a,…`) finds it.
        char first[64];
        snprintf(first, sizeof first, "%.*s", (int)strcspn(format_name, ","), format_name);
        forced = ff.find_input_format(first);
    }
    if (probe_bytes > 0) {
        decoder->format->probesize = probe_bytes;
        decoder->format->format_probesize = probe_bytes > INT32_MAX ? INT32_MAX : (int)probe_bytes;
    }
    if (analyze_microseconds > 0) decoder->format->max_analyze_duration = analyze_microseconds;
    int code = ff.open_input(&decoder->format, NULL, forced, NULL);
    if (code < 0) {
        open_failed(code, status, message, size);
        decoder->format = NULL;  // avformat_open_input freed the context, not the I/O
        reel_ff_close(decoder);
        return NULL;
    }
    // A demuxer named by the caller was not probed: it is certain.
    if (forced != NULL) decoder->format->probe_score = AVPROBE_SCORE_MAX;
    return finish_open(decoder, status, message, size);
}

/// The probe's `guess` at `score` is not a format: `status` becomes REEL_FF_UNKNOWN_FORMAT and
/// `message` says so, with `why` (what failed when it was tried; NULL when it was not tried, and
/// `why` may be `message` itself).
static void refuse_guess(const AVInputFormat *guess, int score, const char *why, reel_ff_status *status, char *message,
                         size_t size) {
    const char *name = guess != NULL ? guess->name : "?";
    *status = REEL_FF_UNKNOWN_FORMAT;
    if (why == NULL) {
        snprintf(message, size, "not a format FFmpeg knows (only a guess: %s, at %d of 100)", name, score);
        return;
    }
    char failure[160];
    snprintf(failure, sizeof failure, "%s", why);
    snprintf(message, size, "not a format FFmpeg knows (a guess, %s at %d of 100, that does not decode: %s)", name, score,
             failure);
}

/// A failure after the format probe. When the probe's answer was a weak guess — below
/// AVPROBE_SCORE_EXTENSION (50): neither the suffix nor strong content agreed — a file that then
/// does not decode is not that format broken but no format Reel knows (random bytes that some
/// demuxer takes at 25 of 100 answer `unsupported_format`, not `corrupt_file`). Closes the
/// decoder and returns NULL.
static reel_ff_decoder *failed_guess(reel_ff_decoder *decoder, reel_ff_status *status, char *message, size_t size) {
    if (decoder->format != NULL && decoder->format->probe_score < AVPROBE_SCORE_EXTENSION && *status != REEL_FF_IO) {
        refuse_guess(decoder->format->iformat, decoder->format->probe_score, message, status, message, size);
    }
    reel_ff_close(decoder);
    return NULL;
}

/// Opens the best audio stream's decoder of a demuxer just opened and takes its first frame;
/// closes the decoder on failure.
static reel_ff_decoder *finish_open(reel_ff_decoder *decoder, reel_ff_status *status, char *message, size_t size) {
    int code;
    // A guess is not a format: FFmpeg opens anything some demuxer scores above 0 (a file that
    // starts with '[' is "lyrics" at 5), and real files score 50 or more (its suffix, or its
    // content). Below AVPROBE_SCORE_RETRY, FFmpeg itself warns of a misdetection.
    if (decoder->format->probe_score < AVPROBE_SCORE_RETRY) {
        refuse_guess(decoder->format->iformat, decoder->format->probe_score, NULL, status, message, size);
        reel_ff_close(decoder);
        return NULL;
    }
    code = ff.find_stream_info(decoder->format, NULL);
    if (code < 0) {
        *status = status_of(code);
        describe(code, message, size);
        return failed_guess(decoder, status, message, size);
    }
    const AVCodec *codec = NULL;
    code = ff.find_best_stream(decoder->format, AVMEDIA_TYPE_AUDIO, -1, -1, &codec, 0);
    if (code < 0) {
        *status = REEL_FF_UNSUPPORTED;
        if (code == AVERROR_DECODER_NOT_FOUND) {
            int audio = ff.find_best_stream(decoder->format, AVMEDIA_TYPE_AUDIO, -1, -1, NULL, 0);
            const char *name = audio >= 0 ? ff.codec_name(decoder->format->streams[audio]->codecpar->codec_id) : "?";
            snprintf(message, size, "FFmpeg has no decoder for its audio (%s)", name);
        } else {
            snprintf(message, size, "it holds no audio stream");
        }
        return failed_guess(decoder, status, message, size);
    }
    decoder->stream = code;
    AVStream *stream = decoder->format->streams[code];
    decoder->time_base = stream->time_base;
    decoder->codec = ff.codec_alloc(codec);
    decoder->packet = ff.packet_alloc();
    decoder->frame = ff.frame_alloc();
    if (decoder->codec == NULL || decoder->packet == NULL || decoder->frame == NULL) {
        *status = REEL_FF_IO;
        snprintf(message, size, "out of memory");
        return failed_guess(decoder, status, message, size);
    }
    code = ff.parameters_to_context(decoder->codec, stream->codecpar);
    if (code >= 0) {
        decoder->codec->pkt_timebase = stream->time_base;
        code = ff.codec_open(decoder->codec, codec, NULL);
    }
    if (code < 0) {
        *status = REEL_FF_CORRUPT;
        describe(code, message, size);
        return failed_guess(decoder, status, message, size);
    }
    int rate = decoder->codec->sample_rate;
    int channels = decoder->codec->ch_layout.nb_channels;
    if (!sane_format(rate, channels)) {
        *status = REEL_FF_CORRUPT;
        snprintf(message, size, "it declares %d channels at %d Hz", channels, rate);
        return failed_guess(decoder, status, message, size);
    }
    snprintf(decoder->codec_name, sizeof decoder->codec_name, "%s", ff.codec_name(stream->codecpar->codec_id));
    snprintf(decoder->container_name, sizeof decoder->container_name, "%s",
             decoder->format->iformat != NULL && decoder->format->iformat->name != NULL ? decoder->format->iformat->name : "");
    const AVCodecDescriptor *descriptor = ff.descriptor_get(stream->codecpar->codec_id);
    decoder->lossless = descriptor != NULL && (descriptor->props & AV_CODEC_PROP_LOSSLESS) != 0;
    decoder->lossy = descriptor != NULL && (descriptor->props & AV_CODEC_PROP_LOSSY) != 0 && !decoder->lossless;
    decoder->start = stream->start_time != AV_NOPTS_VALUE ? stream->start_time : 0;
    for (unsigned i = 0; i < decoder->format->nb_streams; i++) {
        if (decoder->format->streams[i]->codecpar->codec_id == AV_CODEC_ID_TIMED_ID3) decoder->has_timed_id3 = 1;
    }

    // The first frame, decoded now and held: some decoders learn their sample format from it,
    // and where it says it lies is where the file's timestamps start (ASF's are in milliseconds
    // after the decoder's delay: the first WMA frame says 92 ms).
    decoder->info.sample_rate = rate;
    int got = next_frame(decoder, message, size);
    if (got <= 0) {
        *status = REEL_FF_CORRUPT;
        if (got == 0) snprintf(message, size, "it holds no audio that decodes");
        return failed_guess(decoder, status, message, size);
    }
    // The stream is what its first frame holds, which may not be what the codec's parameters
    // said (a decoder that learns its channels from the first packet): every frame handed out
    // is converted as the stream's format says, so it must be this one's.
    rate = decoder->frame->sample_rate;
    channels = decoder->frame->ch_layout.nb_channels;
    if (!sane_format(rate, channels)) {
        *status = REEL_FF_CORRUPT;
        snprintf(message, size, "its first frame holds %d channels at %d Hz", channels, rate);
        return failed_guess(decoder, status, message, size);
    }
    decoder->info.sample_rate = rate;
    int64_t first = frame_place(decoder, decoder->frame);
    decoder->first_place = first > 0 ? first : 0;

    int64_t frames = -1;
    int exact = 0;
    AVRational per_sample = {1, rate};
    // Exact only where the container counts in samples (an MP4's edit list, WavPack's and TTA's
    // headers): a duration from the bitrate (ADTS AAC) or in milliseconds (ASF) is an estimate.
    int estimated = decoder->format->duration_estimation_method == AVFMT_DURATION_FROM_BITRATE;
    int counts_samples = stream->time_base.num == 1 && stream->time_base.den == rate;
    if (stream->duration != AV_NOPTS_VALUE && stream->duration > 0) {
        frames = ff.rescale_q(stream->duration, stream->time_base, per_sample);
        exact = !estimated && counts_samples;
    } else if (decoder->format->duration != AV_NOPTS_VALUE && decoder->format->duration > 0) {
        frames = ff.rescale_q(decoder->format->duration, AV_TIME_BASE_Q, per_sample);
    }
    int source_bits = stream->codecpar->bits_per_raw_sample;
    if (source_bits <= 0 && decoder->lossless) source_bits = ff.bytes_per_sample(decoder->codec->sample_fmt) * 8;
    decoder->info = (reel_ff_info){
        .sample_rate = rate,
        .channels = channels,
        .bits = output_bits(decoder->frame->format, decoder->lossy),
        .source_bits = decoder->lossless ? source_bits : 0,
        .frames = frames,
        .frames_exact = exact,
        .codec = decoder->codec_name,
        .container = decoder->container_name,
        .bit_rate = stream->codecpar->bit_rate > 0 ? stream->codecpar->bit_rate : decoder->codec->bit_rate,
    };
    *status = REEL_FF_OK;
    return decoder;
}

reel_ff_info reel_ff_get_info(const reel_ff_decoder *decoder) {
    return decoder->info;
}

/// The place of a decoded frame's first sample, from the first audible frame; -1 if unknown.
static int64_t frame_place(const reel_ff_decoder *decoder, const AVFrame *frame) {
    int64_t pts = frame->best_effort_timestamp;
    if (pts == AV_NOPTS_VALUE) pts = frame->pts;
    if (pts == AV_NOPTS_VALUE) return -1;
    AVRational per_sample = {1, decoder->info.sample_rate > 0 ? decoder->info.sample_rate : decoder->codec->sample_rate};
    return ff.rescale_q(pts - decoder->start, decoder->time_base, per_sample) - decoder->first_place;
}

/// Packets at one byte position kept apart in a key (`place_key`): more than a page or a PES holds.
static const int64_t places_per_position = 4096;

/// What a packet's `pos` becomes before it goes to the decoder, which hands it to the frame it
/// decodes (`pkt_pos`): its byte position times `places_per_position` plus its order among the
/// packets at that position (an Ogg page's packets share their page's; the ADTS frames an
/// MPEG-TS PES holds have none after the first, and count as its). -1 when no position is known.
static int64_t place_key(reel_ff_decoder *decoder, int64_t position) {
    if (position < 0 || position == decoder->last_position) {
        if (decoder->last_position < 0) return -1;
        decoder->position_index++;
    } else {
        decoder->last_position = position;
        decoder->position_index = 0;
    }
    int64_t index = decoder->position_index < places_per_position ? decoder->position_index : places_per_position - 1;
    return decoder->last_position * places_per_position + index;
}

/// The most bytes of one timed-ID3 packet kept (FFmpeg's MPEG-TS demuxer hands out at most
/// 200 KiB a PES): a larger one is kept as its size only, and `reel_ff_take_timed_id3` copies none.
static const int64_t max_timed_id3_bytes = 256 << 10;

/// Keeps `packet` when it is timed metadata (an MPEG-TS timed-ID3 stream's, stream type 0x15 with
/// "ID3 "): its bytes and its time, for `reel_ff_take_timed_id3`. The oldest goes when more than
/// `timed_id3`'s room are waiting. A file's decoder (`reel_ff_open`) keeps none: titles are a
/// stream's.
static void keep_timed_id3(reel_ff_decoder *decoder, const AVPacket *packet) {
    if (decoder->read_callback == NULL) return;
    if (packet->stream_index < 0 || (unsigned)packet->stream_index >= decoder->format->nb_streams) return;
    const AVStream *stream = decoder->format->streams[packet->stream_index];
    if (stream->codecpar->codec_id != AV_CODEC_ID_TIMED_ID3 || packet->size <= 0) return;
    const int room = (int)(sizeof decoder->timed_id3 / sizeof *decoder->timed_id3);
    if (decoder->timed_id3_count == room) {
        free(decoder->timed_id3[0].data);
        memmove(&decoder->timed_id3[0], &decoder->timed_id3[1], sizeof *decoder->timed_id3 * (size_t)(room - 1));
        decoder->timed_id3_count--;
    }
    struct timed_id3 *kept = &decoder->timed_id3[decoder->timed_id3_count];
    kept->size = packet->size;
    kept->data = NULL;
    if (packet->size <= max_timed_id3_bytes) {
        kept->data = malloc((size_t)packet->size);
        memcpy(kept->data, packet->data, (size_t)packet->size);
    }
    kept->time = packet->pts != AV_NOPTS_VALUE
                     ? ff.rescale_q(packet->pts, stream->time_base, decoder->time_base) - decoder->start
                     : AV_NOPTS_VALUE;
    decoder->timed_id3_count++;
}

/// Takes the next decoded frame into `decoder->frame`: 1, 0 at the end, -1 on an error.
static int next_frame(reel_ff_decoder *decoder, char *message, size_t size) {
    int bad = 0;
    ff.frame_unref(decoder->frame);
    decoder->holding = 0;
    decoder->offset = 0;
    while (!decoder->ended) {
        int code = ff.receive_frame(decoder->codec, decoder->frame);
        if (code == 0) {
            if (decoder->frame->nb_samples <= 0) {
                ff.frame_unref(decoder->frame);
                continue;
            }
            int64_t place = frame_place(decoder, decoder->frame);
            if (decoder->target >= 0) {
                // After a seek: drop what lies before the target; the rest counts from the frame's place.
                int64_t start = place >= 0 ? place : decoder->target;
                int64_t end = start + decoder->frame->nb_samples;
                if (end <= decoder->target) {
                    ff.frame_unref(decoder->frame);
                    continue;
                }
                decoder->offset = start < decoder->target ? (int)(decoder->target - start) : 0;
                decoder->position = start + decoder->offset;
                decoder->target = -1;
            }
            decoder->frame_start = decoder->position - decoder->offset;
            decoder->holding = 1;
            return 1;
        }
        if (code == AVERROR_EOF) {
            decoder->ended = 1;
            return 0;
        }
        if (code != AVERROR(EAGAIN)) {
            describe(code, message, size);
            return -1;
        }
        // The decoder wants a packet.
        if (decoder->draining) {
            decoder->ended = 1;
            return 0;
        }
        for (;;) {
            code = ff.read_frame(decoder->format, decoder->packet);
            if (code < 0) {
                // The end, or a file cut short: what decoded so far is played, then the end.
                decoder->draining = 1;
                ff.send_packet(decoder->codec, NULL);
                break;
            }
            if (decoder->packet->stream_index != decoder->stream) {
                keep_timed_id3(decoder, decoder->packet);
                ff.packet_unref(decoder->packet);
                continue;
            }
            decoder->packet->pos = place_key(decoder, decoder->packet->pos);
            code = ff.send_packet(decoder->codec, decoder->packet);
            ff.packet_unref(decoder->packet);
            if (code < 0 && code != AVERROR(EAGAIN)) {
                // A broken packet: skipped, as players do, unless the file is broken throughout.
                if (++bad > max_bad_packets) {
                    describe(code, message, size);
                    return -1;
                }
                continue;
            }
            break;
        }
    }
    return 0;
}

static inline int16_t clip16(long value) {
    if (value > INT16_MAX) return INT16_MAX;
    if (value < INT16_MIN) return INT16_MIN;
    return (int16_t)value;
}

static inline int32_t clip32(double value) {
    if (value >= 2147483647.0) return INT32_MAX;
    if (value <= -2147483648.0) return INT32_MIN;
    return (int32_t)lrint(value);
}

/// `value` rounded to the nearest integer, ties to even, and clipped to 16 bits: what
/// clip16(lrintf(value)) gives (and libswresample), inline. lrintf is a call into libm here
/// (C's math functions keep errno), and this runs for every sample of a lossy file.
static inline int16_t round_clip16(float value) {
    if (value >= 32767.0f) return INT16_MAX;
    if (!(value > -32768.0f)) return INT16_MIN;  // and NaN, as lrintf's answer clipped
#if defined(__x86_64__)
    return (int16_t)_mm_cvtss_si32(_mm_set_ss(value));  // the default rounding: to nearest, ties to even
#elif defined(__aarch64__)
    return (int16_t)vcvtns_s32_f32(value);  // to nearest, ties to even
#else
    return (int16_t)lrintf(value);
#endif
}

/// Each of `count` samples of one channel, from `from` every `step`, as `expression` of
/// `sample`, into `to` every `channels`: one loop per sample format, nothing decided per sample.
#define EACH_SAMPLE(type, expression)                                                              \
    do {                                                                                           \
        const type *from = (const type *)plane + first;                                           \
        for (int i = 0; i < count; i++) {                                                          \
            type sample = from[(ptrdiff_t)i * step];                                               \
            to[(ptrdiff_t)i * channels] = (expression);                                            \
        }                                                                                          \
    } while (0)

/// Writes `count` frames of the held frame from `offset`, interleaved, into `out`.
static void convert(const reel_ff_decoder *decoder, int offset, int count, void *out) {
    const AVFrame *frame = decoder->frame;
    int channels = decoder->info.channels;
    enum AVSampleFormat format = frame->format;
    int planar = ff.is_planar(format);
    for (int channel = 0; channel < channels; channel++) {
        const uint8_t *plane = planar ? frame->extended_data[channel] : frame->extended_data[0];
        int step = planar ? 1 : channels;
        int first = planar ? offset : offset * channels + channel;
        if (decoder->info.bits == 16) {
            int16_t *to = (int16_t *)out + channel;
            switch (format) {
            case AV_SAMPLE_FMT_U8:
            case AV_SAMPLE_FMT_U8P: EACH_SAMPLE(uint8_t, (int16_t)(((int)sample - 128) * 256)); break;
            // Rounded and clipped as FFmpeg's own conversion (libswresample) does.
            case AV_SAMPLE_FMT_FLT:
            case AV_SAMPLE_FMT_FLTP: EACH_SAMPLE(float, round_clip16(sample * 32768.0f)); break;
            case AV_SAMPLE_FMT_DBL:
            case AV_SAMPLE_FMT_DBLP: EACH_SAMPLE(double, clip16(lrint(sample * 32768.0))); break;
            default: EACH_SAMPLE(int16_t, sample); break;
            }
        } else {
            int32_t *to = (int32_t *)out + channel;
            switch (format) {
            case AV_SAMPLE_FMT_S32:
            case AV_SAMPLE_FMT_S32P: EACH_SAMPLE(int32_t, sample); break;
            case AV_SAMPLE_FMT_FLT:
            case AV_SAMPLE_FMT_FLTP: EACH_SAMPLE(float, clip32((double)sample * 2147483648.0)); break;
            case AV_SAMPLE_FMT_DBL:
            case AV_SAMPLE_FMT_DBLP: EACH_SAMPLE(double, clip32(sample * 2147483648.0)); break;
            case AV_SAMPLE_FMT_S64:
            case AV_SAMPLE_FMT_S64P: EACH_SAMPLE(int64_t, (int32_t)(sample >> 32)); break;
            default:
                for (int i = 0; i < count; i++) to[(ptrdiff_t)i * channels] = 0;
                break;
            }
        }
    }
}

#undef EACH_SAMPLE

/// `reel_ff_read`; with `place`, it stops at the end of the decoded frame it reads from and says
/// where that frame came from.
static int64_t read_frames(reel_ff_decoder *decoder, void *buffer, int64_t frames, reel_ff_place *place, char *message,
                           size_t size) {
    if (decoder->first_read == 0) decoder->first_read = monotonic_nanoseconds();
    if (!decoder->pages_released &&
        (decoder->file >= 0 ||
         (decoder->handed_out >= (int64_t)pages_released_after_seconds * decoder->info.sample_rate &&
          monotonic_nanoseconds() - decoder->first_read >= pages_released_after_nanoseconds))) {
        // Decoding has started: the code that opening it (and every file opened since the last
        // time) touched goes back, FFmpeg's probes most of it, and what decoding runs comes back
        // as it runs.
        decoder->pages_released = 1;
        reel_loaded_pages_release();
    }
    int64_t written = 0;
    size_t bytes_per_frame = (size_t)decoder->info.channels * (size_t)(decoder->info.bits / 8);
    int64_t limit = decoder->info.frames_exact && !decoder->unbounded ? decoder->info.frames : -1;
    while (written < frames) {
        if (limit >= 0 && decoder->position >= limit) break;  // the container's end: padding is not audio
        if (decoder->changed) {
            snprintf(message, size, "its audio format changes in the middle");
            return written > 0 ? written : -1;
        }
        if (!decoder->holding || decoder->offset >= decoder->frame->nb_samples) {
            int got = next_frame(decoder, message, size);
            if (got < 0) return written > 0 ? written : -1;
            if (got == 0) break;
            // A frame whose format changed mid-stream cannot be put out as the stream started:
            // it is dropped, and so is the rest (the next read fails, as this one if it is the first).
            if (output_bits(decoder->frame->format, decoder->lossy) != decoder->info.bits ||
                decoder->frame->ch_layout.nb_channels != decoder->info.channels ||
                decoder->frame->sample_rate != decoder->info.sample_rate) {
                ff.frame_unref(decoder->frame);
                decoder->holding = 0;
                decoder->changed = 1;
            }
            continue;
        }
        int64_t count = decoder->frame->nb_samples - decoder->offset;
        if (count > frames - written) count = frames - written;
        if (limit >= 0 && count > limit - decoder->position) count = limit - decoder->position;
        convert(decoder, decoder->offset, (int)count, (uint8_t *)buffer + (size_t)written * bytes_per_frame);
        if (place != NULL) {
            int64_t key = decoder->frame->pkt_pos;
            place->byte = key >= 0 ? key / places_per_position : -1;
            place->index = key >= 0 ? key % places_per_position : 0;
            place->samples = decoder->frame->nb_samples;
            place->offset = decoder->offset;
        }
        decoder->offset += (int)count;
        decoder->position += count;
        decoder->handed_out += count;
        written += count;
        if (place != NULL) break;
    }
    return written;
}

int reel_ff_pages_released(const reel_ff_decoder *decoder) {
    return decoder->pages_released;
}

int64_t reel_ff_read(reel_ff_decoder *decoder, void *buffer, int64_t frames, char *message, size_t size) {
    return read_frames(decoder, buffer, frames, NULL, message, size);
}

int64_t reel_ff_read_frame(reel_ff_decoder *decoder, void *buffer, int64_t frames, reel_ff_place *place, char *message,
                           size_t size) {
    return read_frames(decoder, buffer, frames, place, message, size);
}

int reel_ff_seek(reel_ff_decoder *decoder, int64_t frame, char *message, size_t size) {
    if (frame < 0) frame = 0;
    // Lossy: from before the target, and before the first frame when it is near the start, so
    // that the priming packet an encoder put before it (AAC's 1024 samples) is decoded too, as
    // when the file plays from its start: a decoder's first frame after a jump is not yet right.
    int64_t from = decoder->lossless ? frame : frame - lossy_preroll;
    AVRational per_sample = {1, decoder->info.sample_rate};
    int64_t timestamp = ff.rescale_q(from, per_sample, decoder->time_base) + decoder->start;
    int code = ff.seek_frame(decoder->format, decoder->stream, timestamp, AVSEEK_FLAG_BACKWARD);
    if (code < 0 && from < 0) {
        // Before the first packet: the first packet.
        code = ff.seek_frame(decoder->format, -1, INT64_MIN / 2, AVSEEK_FLAG_BACKWARD | AVSEEK_FLAG_ANY);
    }
    if (code < 0) {
        // A format without an index: from the start, decoding up to the frame.
        code = ff.seek_frame(decoder->format, decoder->stream, decoder->start, AVSEEK_FLAG_BACKWARD | AVSEEK_FLAG_ANY);
        if (code < 0) {
            describe(code, message, size);
            return -1;
        }
    }
    ff.flush_buffers(decoder->codec);
    ff.frame_unref(decoder->frame);
    decoder->holding = 0;
    decoder->offset = 0;
    decoder->draining = 0;
    decoder->ended = 0;
    decoder->changed = 0;
    decoder->target = frame;
    decoder->position = frame;
    return 0;
}

int reel_ff_has_timed_id3(const reel_ff_decoder *decoder) {
    return decoder->has_timed_id3;
}

int64_t reel_ff_take_timed_id3(reel_ff_decoder *decoder, uint8_t *buffer, int64_t capacity, int64_t *at) {
    if (decoder->timed_id3_count == 0) return -1;
    struct timed_id3 taken = decoder->timed_id3[0];
    // One that would fit stays for a call with room.
    if (taken.data != NULL && taken.size > capacity) return taken.size;
    decoder->timed_id3_count--;
    memmove(&decoder->timed_id3[0], &decoder->timed_id3[1], sizeof *decoder->timed_id3 * (size_t)decoder->timed_id3_count);
    if (taken.data != NULL) memcpy(buffer, taken.data, (size_t)taken.size);
    free(taken.data);
    // From the held frame's first sample, both on the audio stream's clock.
    *at = 0;
    if (taken.time != AV_NOPTS_VALUE && decoder->holding) {
        int64_t held = frame_place(decoder, decoder->frame);
        if (held >= 0) {
            AVRational per_sample = {1, decoder->info.sample_rate};
            *at = ff.rescale_q(taken.time, decoder->time_base, per_sample) - decoder->first_place - held;
        }
    }
    // Too large to be kept (or no memory for it): its size, and nothing copied.
    return taken.data != NULL ? taken.size : (taken.size > capacity ? taken.size : 0);
}
