// FFmpeg's decoders (libavformat, libavcodec, libavutil), loaded when the first file that needs
// them is opened rather than when reeld starts: a daemon that never plays such a file maps none
// of them. Everything that touches FFmpeg's structures is in CFFmpeg.c, compiled against
// Debian's FFmpeg 5.1 headers (libavformat-dev, libavcodec-dev); Swift sees this small API.
// Loading brings in some 125 libraries (libavcodec's dependencies) and opening a file runs every
// demuxer's probe: the code pages that this touches and decoding does not use are handed back to
// the kernel after loading and at a decoder's first read (CDynamicLibrary's
// `reel_loaded_pages_release`).
//
// A decoder is used by one thread at a time. `reel_ff_load` may be called from any thread.

#ifndef REEL_CFFMPEG_H
#define REEL_CFFMPEG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The sonames loaded: FFmpeg 5.1's (Debian 12's libavformat59, libavcodec59, libavutil57).
#define REEL_FF_AVUTIL "libavutil.so.57"
#define REEL_FF_AVCODEC "libavcodec.so.59"
#define REEL_FF_AVFORMAT "libavformat.so.59"

/// Loads the libraries and finds their functions, once for the process (later calls return
/// the first one's result). NULL when they are ready, else why not (a static string).
const char *reel_ff_load(void);

/// True once `reel_ff_load` has loaded FFmpeg; never loads it (for tests).
int reel_ff_loaded(void);

/// What `reel_ff_open` and the others report.
typedef enum {
    REEL_FF_OK = 0,
    /// No audio stream, or none FFmpeg decodes: unsupported_format.
    REEL_FF_UNSUPPORTED = 1,
    /// A format it knows, but broken: corrupt_file.
    REEL_FF_CORRUPT = 2,
    /// The file cannot be read (errno-like): io_error.
    REEL_FF_IO = 3,
    /// FFmpeg could not be loaded: unsupported_format, with `reel_ff_load`'s reason.
    REEL_FF_NOT_LOADED = 4,
    /// Not a format FFmpeg knows at all.
    REEL_FF_UNKNOWN_FORMAT = 5,
} reel_ff_status;

typedef struct reel_ff_decoder reel_ff_decoder;

/// What a decoder puts out: interleaved samples, 16-bit (`bits` 16) or 32-bit (`bits` 32, the
/// top bits significant: a 24-bit source is shifted up), at the file's own rate and channels.
typedef struct {
    int sample_rate;
    int channels;
    /// 16 or 32: the size of each output sample.
    int bits;
    /// The source's own precision (16, 24, 32), 0 when it has none (a lossy codec).
    int source_bits;
    /// Frames in the file as its container declares them (an MP4's edit list, a WavPack header),
    /// -1 when unknown.
    int64_t frames;
    /// 1 when `frames` is the container's exact count, 0 when FFmpeg estimated it (from the
    /// bitrate: ADTS AAC): then it is not a bound on what is played.
    int frames_exact;
    /// FFmpeg's name of the codec (`aac`, `alac`, `wavpack`, `wmav2`, `dsd_lsbf`, …).
    const char *codec;
    /// The demuxer's name (`mov,mp4,m4a,3gp,3g2,mj2`, `wv`, `aac`, …).
    const char *container;
    /// Bits a second of the compressed stream as the container or codec says, 0 when unknown.
    int64_t bit_rate;
} reel_ff_info;

/// Opens `path` and its best audio stream's decoder. On failure returns NULL, sets `*status` and
/// writes a sentence (without the path) into `message`.
reel_ff_decoder *reel_ff_open(const char *path, reel_ff_status *status, char *message, size_t message_size);

/// A stream's bytes: copies up to `size` of them into `buffer` and returns how many, waiting
/// for them if it must (on the decoder's thread); 0 at the end, negative on an error.
typedef int (*reel_ff_read_callback)(void *context, uint8_t *buffer, int size);

/// Opens a stream that comes through `read` (called on this thread and the reader's, with
/// `context`), not seekable: a live stream, or a file that arrives whole (an MP4 with its index
/// first). `format_name` (a demuxer's name, as `reel_ff_info.container` says it) opens that
/// demuxer without probing; NULL probes. Probing reads at most `probe_bytes` (0: FFmpeg's 1 MiB)
/// and the stream's analysis at most that many bytes and `analyze_microseconds` of audio (0:
/// FFmpeg's 5 s). `bounded`: the stream is a file of known length, so its container's length is
/// its end (an MP4's padding after it is not audio); else (live) reading runs past any length
/// its container gives (a live fMP4's init section or `sidx` names only its first fragments).
/// Fails as `reel_ff_open` does; a `read` that fails is REEL_FF_IO. Neither a stream's nor a
/// file's demuxer opens anything else (an HLS or concat playlist's entries).
reel_ff_decoder *reel_ff_open_stream(reel_ff_read_callback read, void *context, const char *format_name, int bounded,
                                     int64_t probe_bytes, int64_t analyze_microseconds, reel_ff_status *status,
                                     char *message, size_t message_size);

/// The stream's format.
reel_ff_info reel_ff_get_info(const reel_ff_decoder *decoder);

/// Whether the pages opening `decoder` touched were handed back (`reel_loaded_pages_release`):
/// a file's at its first read; a stream's by the first read once it has handed out 3 s of
/// audio and its first read is a second old, never before (not on the way to the first sound).
/// A decoder closed before that, and read from, hands them back as it closes. 1 or 0.
int reel_ff_pages_released(const reel_ff_decoder *decoder);

/// Decodes up to `frames` frames into `buffer` (interleaved, `bits` wide); returns the frames
/// written, 0 at the end, or -1 on an error (then `message` says why).
int64_t reel_ff_read(reel_ff_decoder *decoder, void *buffer, int64_t frames, char *message, size_t message_size);

/// Where the frames `reel_ff_read_frame` returned came from.
typedef struct {
    /// The byte position of the packet they were decoded from, counted in the bytes `read` gave
    /// from the open on (an Ogg page's, an ADTS frame's, an MPEG-TS PES's first packet), -1
    /// when the demuxer does not say.
    int64_t byte;
    /// The packet's order among the packets at `byte` (0 for the first).
    int64_t index;
    /// The frames the decoded frame holds, and the first of them returned.
    int samples;
    int offset;
} reel_ff_place;

/// `reel_ff_read`, but from one decoded frame only (the rest of the one it holds, or the next):
/// `place` says where that frame came from.
int64_t reel_ff_read_frame(reel_ff_decoder *decoder, void *buffer, int64_t frames, reel_ff_place *place, char *message,
                           size_t message_size);

/// Moves so that the next read starts at `frame` (counted from the first audible frame),
/// sample-exactly: it seeks to a packet before it and decodes up to it. 0, or -1 (`message`).
int reel_ff_seek(reel_ff_decoder *decoder, int64_t frame, char *message, size_t message_size);

void reel_ff_close(reel_ff_decoder *decoder);

/// 1 when the demuxer has a timed-metadata stream of ID3 tags (an MPEG-TS elementary stream of
/// type 0x15 registered as "ID3 ", as HLS carries what is on air; FFmpeg's AV_CODEC_ID_TIMED_ID3).
int reel_ff_has_timed_id3(const reel_ff_decoder *decoder);

/// The oldest timed-ID3 packet a stream's demuxer (`reel_ff_open_stream`; a file's keeps none)
/// read and not taken yet (it reads them on the way to the audio; the newest 8 are kept, each
/// of at most 256 KiB): copies its payload (an ID3v2 tag) into `buffer` and returns its size;
/// -1 when none is waiting. One of up to 256 KiB that does not fit in `capacity` stays, and its
/// size is returned (call again with room); a larger one was kept as its size only: that size is
/// returned, nothing copied, and it is gone. `*at` is where it lies in frames from the first
/// sample of the decoded frame the last `reel_ff_read_frame` read from (its presentation time
/// against that frame's, on the audio's clock), 0 when either time is unknown.
int64_t reel_ff_take_timed_id3(reel_ff_decoder *decoder, uint8_t *buffer, int64_t capacity, int64_t *at);

/// 1 when the loaded libavcodec has a decoder named `name` (`aac`, `alac`, …); loads FFmpeg.
int reel_ff_has_decoder(const char *name);

#ifdef __cplusplus
}
#endif

#endif
