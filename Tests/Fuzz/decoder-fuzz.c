// decoder-fuzz: a mutation fuzzer for the FFmpeg decoder path (Sources/CFFmpeg/CFFmpeg.c).
//
// Built by scripts/fuzz-decoders with the shim compiled in under AddressSanitizer and
// UndefinedBehaviorSanitizer. FFmpeg itself is Debian's uninstrumented libavformat, libavcodec
// and libavutil, loaded by the shim with dlopen as in reeld: their heap blocks are ASan's (its
// allocator replaces malloc for the whole process), so the shim's misuse of what FFmpeg hands
// out is caught, and so are FFmpeg's overruns through libc calls ASan intercepts (memcpy, …),
// but not FFmpeg's own loads and stores.
//
//   decoder-fuzz --seeds DIR --out DIR [--runs N] [--seed S] [--cpu-seconds N] [--rss-mb N]
//       Each run takes a seed file, mutates it (byte flips, truncation, chunk duplication and
//       deletion, MP4 box sizes and fields, WavPack block and ADTS frame headers, huge sizes,
//       splices), writes it to OUT/work/, and in a forked child opens it, reads it to its end
//       (bounded), seeks a few times, reads after each seek, and closes it; then opens it again
//       as a stream (reel_ff_open_stream, its bytes in pieces of random sizes) and reads it to
//       its end. A child that crashes,
//       reports (ASan, UBSan, LeakSanitizer), breaks the API's contract, runs past the CPU or
//       wall-time bound or past the RSS bound is a failure: its input and log are kept in
//       OUT/failures/. Prints one summary line; exits 1 if any run failed.
//   decoder-fuzz --replay FILE...
//       Runs the same checks on each file in this process (no fork): for a failure's input.

#define _GNU_SOURCE
#include "CFFmpeg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

// MARK: Bounds and exit codes

/// The sanitizers' settings, built in (ASAN_OPTIONS and UBSAN_OPTIONS add to them): a report
/// ends the child with EXIT_SANITIZER; LeakSanitizer checks at its exit; an allocation over
/// 1 GiB is a report (a small file that asks for that is a bug or needs a guard); a smaller
/// quarantine keeps the RSS bound about the decoder rather than ASan.
const char *__asan_default_options(void) {
    return "exitcode=66:detect_leaks=1:max_allocation_size_mb=1024:allocator_may_return_null=0:quarantine_size_mb=32:"
           "handle_abort=1:handle_sigfpe=1";
}

const char *__ubsan_default_options(void) {
    return "exitcode=66:halt_on_error=1:print_stacktrace=1";
}

/// A child's exit codes that the parent reads.
enum {
    EXIT_CONTRACT = 65,  ///< the API broke its contract (a check below)
    EXIT_SANITIZER = 66, ///< ASAN_OPTIONS/UBSAN_OPTIONS exitcode, set by scripts/fuzz-decoders
    EXIT_TIMEOUT = 70,   ///< past the CPU or wall-time bound (the watchdog)
    EXIT_MEMORY = 71,    ///< past the RSS bound (the watchdog)
};

/// Frames read from one file before the driver stops and counts it as runaway (a small file
/// that decodes without end): 30 minutes at 48 kHz.
static const int64_t max_frames = 48000LL * 60 * 30;

static double cpu_seconds = 10;
static long rss_limit_mb = 2048;

static void fail_contract(const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    fprintf(stderr, "decoder-fuzz: contract: ");
    vfprintf(stderr, format, arguments);
    fprintf(stderr, "\n");
    va_end(arguments);
    exit(EXIT_CONTRACT);
}

// MARK: Exercising one file

/// What one file did, for the summary.
typedef struct {
    int opened;
    reel_ff_status status;
    int read_error;
    int runaway;
    int64_t frames_read;
} outcome;

static uint64_t rng_state;

static uint64_t next_random(void) {
    // splitmix64
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint64_t below(uint64_t n) {
    return n == 0 ? 0 : next_random() % n;
}

static void check_message(const char *message, size_t size, const char *what) {
    if (memchr(message, 0, size) == NULL) fail_contract("%s: its message is not terminated", what);
    if (message[0] == 0) fail_contract("%s: no message says why", what);
}

/// Reads up to `limit` frames (all of them when -1); returns the frames read, and sets
/// `*error` when a read failed.
static int64_t read_all(reel_ff_decoder *decoder, reel_ff_info info, void *buffer, int64_t chunk, int64_t limit,
                        int *error, int *runaway) {
    int64_t total = 0;
    for (;;) {
        int64_t want = chunk;
        if (limit >= 0 && limit - total < want) want = limit - total;
        if (want <= 0) break;
        char message[256];
        memset(message, 0x55, sizeof message);
        int64_t got = reel_ff_read(decoder, buffer, want, message, sizeof message);
        if (got < -1 || got > want) fail_contract("reel_ff_read gave %lld for %lld frames", (long long)got, (long long)want);
        if (got < 0) {
            check_message(message, sizeof message, "reel_ff_read");
            *error = 1;
            break;
        }
        if (got == 0) break;
        total += got;
        if (total > max_frames) {
            *runaway = 1;
            break;
        }
    }
    (void)info;
    return total;
}

/// A file's bytes handed out as a stream's are: in pieces of random sizes (1 to 8192 bytes).
typedef struct {
    uint8_t *data;
    size_t size;
    size_t at;
} stream_source;

static int stream_read(void *context, uint8_t *buffer, int size) {
    stream_source *source = context;
    if (size <= 0) fail_contract("the stream's read was asked for %d bytes", size);
    size_t left = source->size - source->at;
    if (left == 0) return 0;
    size_t piece = 1 + (size_t)below(8192);
    if (piece > (size_t)size) piece = (size_t)size;
    if (piece > left) piece = left;
    memcpy(buffer, source->data + source->at, piece);
    source->at += piece;
    return (int)piece;
}

/// The same file through `reel_ff_open_stream` (not seekable, bounded probe), read to its end:
/// what a URL that sends it does.
static void exercise_stream(const char *path) {
    FILE *file = fopen(path, "rb");
    if (file == NULL) return;
    stream_source source = {0};
    size_t capacity = 1 << 16;
    source.data = malloc(capacity);
    size_t got;
    while (source.data != NULL && (got = fread(source.data + source.size, 1, capacity - source.size, file)) > 0) {
        source.size += got;
        if (source.size == capacity) {
            capacity *= 2;
            uint8_t *larger = realloc(source.data, capacity);
            if (larger == NULL) free(source.data);
            source.data = larger;
        }
    }
    fclose(file);
    if (source.data == NULL) return;
    char message[512];
    memset(message, 0x55, sizeof message);
    reel_ff_status status = (reel_ff_status)-1;
    reel_ff_decoder *decoder = reel_ff_open_stream(stream_read, &source, 256 << 10, 3000000, &status, message, sizeof message);
    if (decoder == NULL) {
        if (status < REEL_FF_UNSUPPORTED || status > REEL_FF_UNKNOWN_FORMAT) fail_contract("reel_ff_open_stream failed with status %d", status);
        check_message(message, sizeof message, "reel_ff_open_stream");
    } else {
        reel_ff_info info = reel_ff_get_info(decoder);
        size_t frame_bytes = (size_t)info.channels * (size_t)(info.bits / 8);
        uint8_t *buffer = malloc(4096 * frame_bytes);
        if (buffer == NULL) fail_contract("out of memory");
        int error = 0, runaway = 0;
        read_all(decoder, info, buffer, 4096, -1, &error, &runaway);
        free(buffer);
        reel_ff_close(decoder);
    }
    free(source.data);
}

/// Open, read to the end, seek and read after each seek, close: what playing does, and more.
static outcome exercise(const char *path) {
    outcome result = {0};
    char message[512];
    memset(message, 0x55, sizeof message);
    reel_ff_status status = (reel_ff_status)-1;
    reel_ff_decoder *decoder = reel_ff_open(path, &status, message, sizeof message);
    result.status = status;
    if (decoder == NULL) {
        if (status < REEL_FF_UNSUPPORTED || status > REEL_FF_UNKNOWN_FORMAT) fail_contract("reel_ff_open failed with status %d", status);
        check_message(message, sizeof message, "reel_ff_open");
        return result;
    }
    if (status != REEL_FF_OK) fail_contract("reel_ff_open gave a decoder with status %d", status);
    result.opened = 1;
    reel_ff_info info = reel_ff_get_info(decoder);
    if (info.sample_rate <= 0 || info.channels <= 0 || info.channels > 64 || (info.bits != 16 && info.bits != 32) ||
        info.codec == NULL || info.container == NULL || info.frames < -1) {
        fail_contract("reel_ff_get_info: %d Hz, %d channels, %d bits, %lld frames", info.sample_rate, info.channels, info.bits,
                      (long long)info.frames);
    }
    const int64_t chunk = 4096;
    // One spare frame past the end of what is asked, filled with a pattern: a read that writes
    // more than it says it wrote is caught here (ASan sees only overruns of the whole block).
    size_t frame_bytes = (size_t)info.channels * (size_t)(info.bits / 8);
    size_t bytes = (size_t)(chunk + 1) * frame_bytes;
    uint8_t *buffer = malloc(bytes);
    if (buffer == NULL) fail_contract("out of memory");
    memset(buffer + chunk * frame_bytes, 0xA5, frame_bytes);

    int error = 0, runaway = 0;
    int64_t total = read_all(decoder, info, buffer, chunk, -1, &error, &runaway);
    result.read_error = error;
    result.runaway = runaway;
    result.frames_read = total;
    if (info.frames_exact && info.frames >= 0 && total > info.frames) {
        fail_contract("read %lld frames from a file whose container says %lld", (long long)total, (long long)info.frames);
    }
    // Seeks: the start, the middle, near and past the end, somewhere at random, and far away.
    int64_t length = info.frames > 0 ? info.frames : (total > 0 ? total : 1);
    int64_t targets[] = {0, length / 2, length > 10 ? length - 10 : 0, length + 4096, (int64_t)below((uint64_t)length + 1),
                         -5, INT64_MAX / 4};
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++) {
        memset(message, 0x55, sizeof message);
        int code = reel_ff_seek(decoder, targets[i], message, sizeof message);
        if (code != 0 && code != -1) fail_contract("reel_ff_seek gave %d", code);
        if (code < 0) {
            check_message(message, sizeof message, "reel_ff_seek");
            continue;
        }
        int ignored = 0;
        read_all(decoder, info, buffer, chunk, 3 * chunk, &ignored, &ignored);
    }
    for (size_t i = 0; i < frame_bytes; i++) {
        if (buffer[chunk * frame_bytes + i] != 0xA5) fail_contract("reel_ff_read wrote past the frames it was asked for");
    }
    free(buffer);
    reel_ff_close(decoder);
    return result;
}

// MARK: Seeds and mutations

typedef struct {
    uint8_t *data;
    size_t size;
    size_t capacity;
} bytes;

typedef struct {
    char name[256];
    /// The name without its suffix, and the suffix (with its dot).
    char stem[256];
    char suffix[16];
    bytes content;
} seed_file;

static void reserve(bytes *b, size_t capacity) {
    if (capacity <= b->capacity) return;
    size_t grown = b->capacity * 2 > capacity ? b->capacity * 2 : capacity;
    uint8_t *data = realloc(b->data, grown);
    if (data == NULL) {
        perror("decoder-fuzz: realloc");
        exit(2);
    }
    b->data = data;
    b->capacity = grown;
}

static void insert_at(bytes *b, size_t at, const uint8_t *data, size_t count) {
    if (at > b->size) at = b->size;
    reserve(b, b->size + count);
    memmove(b->data + at + count, b->data + at, b->size - at);
    memcpy(b->data + at, data, count);
    b->size += count;
}

static void delete_range(bytes *b, size_t at, size_t count) {
    if (at >= b->size) return;
    if (count > b->size - at) count = b->size - at;
    memmove(b->data + at, b->data + at + count, b->size - at - count);
    b->size -= count;
}

static void put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

static void put_le32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

static uint32_t get_be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint32_t get_le32(const uint8_t *p) {
    return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/// A value a length or count field might hold to make trouble, near `original`.
static uint32_t interesting32(uint32_t original) {
    static const uint32_t values[] = {0,          1,          2,          7,          8,          15,         16,
                                      0x7F,       0x80,       0xFF,       0x100,      0x7FFF,     0x8000,     0xFFFF,
                                      0x10000,    0xFFFFFF,   0x1000000,  0x10000000, 0x3FFFFFFF, 0x40000000, 0x7FFFFFFE,
                                      0x7FFFFFFF, 0x80000000, 0xFFFFFFF0, 0xFFFFFFFE, 0xFFFFFFFF};
    switch (below(4)) {
    case 0: return original + (uint32_t)(1 + below(16));
    case 1: return original - (uint32_t)(1 + below(16));
    case 2: return original * 2 + 1;
    default: return values[below(sizeof values / sizeof values[0])];
    }
}

/// An MP4 box: where it starts, its header's and its whole size.
typedef struct {
    size_t at;
    size_t header;
    size_t size;
    char type[5];
} box;

enum { max_boxes = 512 };

static int is_container(const char *type) {
    static const char *const containers[] = {"moov", "trak", "mdia", "minf", "stbl", "edts", "dinf", "udta",
                                             "mvex", "moof", "traf", "ilst", "wave", "sinf", "schi"};
    for (size_t i = 0; i < sizeof containers / sizeof containers[0]; i++) {
        if (memcmp(type, containers[i], 4) == 0) return 1;
    }
    return 0;
}

/// What the boxes of a range are: plain boxes, an stsd's sample entries, or ilst's tag items.
enum { plain_boxes, sample_entries, tag_items };

/// The boxes of `data[from, to)` and of the containers among them, depth first.
static void find_boxes(const bytes *b, size_t from, size_t to, int depth, int children, box *boxes, int *count) {
    size_t at = from;
    while (at + 8 <= to && *count < max_boxes) {
        uint64_t size = get_be32(b->data + at);
        size_t header = 8;
        if (size == 1) {
            if (at + 16 > to) return;
            size = (uint64_t)get_be32(b->data + at + 8) << 32 | get_be32(b->data + at + 12);
            header = 16;
        } else if (size == 0) {
            size = to - at;
        }
        if (size < header || size > to - at) return;
        box *found = &boxes[(*count)++];
        found->at = at;
        found->header = header;
        found->size = (size_t)size;
        memcpy(found->type, b->data + at + 4, 4);
        found->type[4] = 0;
        for (int i = 0; i < 4; i++) {
            unsigned char c = (unsigned char)found->type[i];
            if (c < 0x20 || c > 0x7E) found->type[i] = '?';
        }
        if (depth < 10) {
            size_t body = at + header;
            size_t end = at + (size_t)size;
            const char *type = (const char *)b->data + at + 4;
            if (children == sample_entries) {
                // An audio sample entry (mp4a, alac): 28 bytes of fields, then boxes (esds, alac).
                if (body + 28 <= end) find_boxes(b, body + 28, end, depth + 1, plain_boxes, boxes, count);
            } else if (children == tag_items) {
                find_boxes(b, body, end, depth + 1, plain_boxes, boxes, count);  // data boxes
            } else if (memcmp(type, "stsd", 4) == 0) {
                if (body + 8 <= end) find_boxes(b, body + 8, end, depth + 1, sample_entries, boxes, count);
            } else if (memcmp(type, "meta", 4) == 0) {
                if (body + 4 <= end) find_boxes(b, body + 4, end, depth + 1, plain_boxes, boxes, count);
            } else if (memcmp(type, "ilst", 4) == 0) {
                find_boxes(b, body, end, depth + 1, tag_items, boxes, count);
            } else if (is_container(type)) {
                find_boxes(b, body, end, depth + 1, plain_boxes, boxes, count);
            }
        }
        at += (size_t)size;
    }
}

/// Offsets of `magic` (4 bytes) in the data, up to `limit` of them.
static int find_all(const bytes *b, const char *magic, size_t *found, int limit) {
    int count = 0;
    for (size_t at = 0; at + 4 <= b->size && count < limit; at++) {
        if (memcmp(b->data + at, magic, 4) == 0) found[count++] = at;
    }
    return count;
}

/// ADTS frame starts: a 12-bit sync word, layer 0.
static int find_adts(const bytes *b, size_t *found, int limit) {
    int count = 0;
    for (size_t at = 0; at + 7 <= b->size && count < limit; at++) {
        if (b->data[at] == 0xFF && (b->data[at + 1] & 0xF6) == 0xF0) found[count++] = at;
    }
    return count;
}

static const char *mutation_names[] = {"flip",   "bytes", "truncate", "duplicate", "delete", "box-size", "box-field",
                                       "box-dup", "huge-box", "wavpack", "adts", "splice", "value32"};
enum { mutation_count = sizeof mutation_names / sizeof mutation_names[0] };

/// Applies mutation `kind` to `b`; `other` is another seed (for splices). Returns 1 if it
/// changed something.
static int mutate(bytes *b, int kind, const bytes *other) {
    if (b->size == 0 && kind != 11) return 0;
    switch (kind) {
    case 0: {  // bit flips
        int n = 1 + (int)below(8);
        for (int i = 0; i < n; i++) b->data[below(b->size)] ^= (uint8_t)(1u << below(8));
        return 1;
    }
    case 1: {  // random or extreme bytes
        static const uint8_t extremes[] = {0x00, 0xFF, 0x7F, 0x80, 0x01, 0xFE};
        int n = 1 + (int)below(8);
        size_t at = below(b->size);
        for (int i = 0; i < n && at + (size_t)i < b->size; i++) {
            b->data[at + (size_t)i] = below(2) ? (uint8_t)next_random() : extremes[below(sizeof extremes)];
        }
        return 1;
    }
    case 2: {  // truncation: anywhere, near the start, or near the end
        switch (below(3)) {
        case 0: b->size = below(b->size); break;
        case 1: b->size = below(b->size < 64 ? b->size : 64); break;
        default: b->size -= below(b->size < 256 ? b->size : 256) + 1; break;
        }
        return 1;
    }
    case 3: {  // a chunk copied somewhere else
        size_t at = below(b->size);
        size_t count = 1 + below(b->size - at < 4096 ? b->size - at : 4096);
        uint8_t *copy = malloc(count);
        memcpy(copy, b->data + at, count);
        insert_at(b, below(b->size + 1), copy, count);
        free(copy);
        return 1;
    }
    case 4: {  // a chunk deleted
        size_t at = below(b->size);
        delete_range(b, at, 1 + below(1024));
        return 1;
    }
    case 5:    // an MP4 box's size
    case 6:    // a field inside an MP4 box: counts, lengths, timescales, edit lists
    case 7: {  // an MP4 box duplicated (two moov, two trak, two stsd, …) or removed
        box boxes[max_boxes];
        int count = 0;
        find_boxes(b, 0, b->size, 0, plain_boxes, boxes, &count);
        if (count == 0) return 0;
        box chosen = boxes[below((uint64_t)count)];
        if (kind == 5) {
            if (chosen.header == 16 || below(4) == 0) {
                // A 64-bit size: 1 then a huge or wrong largesize.
                uint8_t large[16];
                put_be32(large, 1);
                memcpy(large + 4, b->data + chosen.at + 4, 4);
                uint64_t value = below(2) ? (uint64_t)chosen.size + below(1u << 20) : next_random() >> below(64);
                put_be32(large + 8, (uint32_t)(value >> 32));
                put_be32(large + 12, (uint32_t)value);
                if (chosen.header == 16) {
                    memcpy(b->data + chosen.at, large, 16);
                } else {
                    delete_range(b, chosen.at, 8);
                    insert_at(b, chosen.at, large, 16);
                }
            } else {
                put_be32(b->data + chosen.at, interesting32((uint32_t)chosen.size));
            }
            return 1;
        }
        if (kind == 6) {
            size_t body = chosen.size - chosen.header;
            if (body < 4) return 0;
            // Full boxes' fields are 4-aligned after the header; descriptors (esds) are not.
            size_t offset = below(2) ? (below(body / 4)) * 4 : below(body - 3);
            uint8_t *p = b->data + chosen.at + chosen.header + offset;
            switch (below(3)) {
            case 0: put_be32(p, interesting32(get_be32(p))); break;
            case 1: p[0] = (uint8_t)interesting32(p[0]); break;
            default: {
                uint32_t v = interesting32((uint32_t)p[0] << 8 | p[1]);
                p[0] = (uint8_t)(v >> 8), p[1] = (uint8_t)v;
                break;
            }
            }
            return 1;
        }
        if (below(4) == 0) {
            delete_range(b, chosen.at, chosen.size);
        } else {
            uint8_t *copy = malloc(chosen.size);
            memcpy(copy, b->data + chosen.at, chosen.size);
            insert_at(b, below(2) ? chosen.at + chosen.size : chosen.at, copy, chosen.size);
            free(copy);
        }
        return 1;
    }
    case 8: {  // a bogus box with a huge size inserted at a box boundary
        static const char *const types[] = {"moov", "trak", "mdat", "free", "stsz", "stco", "co64", "stts", "stsc",
                                            "esds", "alac", "udta", "meta", "elst", "mdhd", "ftyp", "uuid", "skip"};
        box boxes[max_boxes];
        int count = 0;
        find_boxes(b, 0, b->size, 0, plain_boxes, boxes, &count);
        size_t at = count > 0 ? boxes[below((uint64_t)count)].at : below(b->size + 1);
        uint8_t header[16];
        memcpy(header + 4, types[below(sizeof types / sizeof types[0])], 4);
        size_t length = 8;
        if (below(2)) {
            put_be32(header, 1);
            uint64_t large = below(2) ? UINT64_MAX - below(1024) : (1ULL << (32 + below(31)));
            put_be32(header + 8, (uint32_t)(large >> 32));
            put_be32(header + 12, (uint32_t)large);
            length = 16;
        } else {
            put_be32(header, below(2) ? 0xFFFFFFFFu - (uint32_t)below(256) : 0x7FFFFFF0u + (uint32_t)below(16));
        }
        insert_at(b, at, header, length);
        return 1;
    }
    case 9: {  // a WavPack block header's fields or a metadata sub-block's size
        size_t blocks[256];
        int count = find_all(b, "wvpk", blocks, 256);
        if (count == 0) return 0;
        size_t at = blocks[below((uint64_t)count)];
        if (at + 32 > b->size) return 0;
        // ckSize, version+index bytes, total_samples, block_index, block_samples, flags, crc
        static const size_t fields[] = {4, 8, 12, 16, 20, 24, 28};
        if (below(4) == 0 && at + 34 <= b->size) {
            // the first sub-block after the header: id, size in words (or 3 bytes if large)
            uint8_t *p = b->data + at + 32;
            if (below(2)) p[0] ^= (uint8_t)(1u << below(8));
            else p[1] = (uint8_t)interesting32(p[1]);
            return 1;
        }
        uint8_t *p = b->data + at + fields[below(sizeof fields / sizeof fields[0])];
        put_le32(p, interesting32(get_le32(p)));
        return 1;
    }
    case 10: {  // an ADTS frame header: its length, channel configuration, rate index, blocks
        size_t frames[256];
        int count = find_adts(b, frames, 256);
        if (count == 0) return 0;
        uint8_t *p = b->data + frames[below((uint64_t)count)];
        switch (below(4)) {
        case 0: {
            uint32_t length = interesting32(((uint32_t)(p[3] & 3) << 11) | ((uint32_t)p[4] << 3) | (p[5] >> 5)) & 0x1FFF;
            p[3] = (uint8_t)((p[3] & ~3) | (length >> 11));
            p[4] = (uint8_t)(length >> 3);
            p[5] = (uint8_t)((p[5] & 0x1F) | ((length & 7) << 5));
            break;
        }
        case 1: {
            uint32_t channels = (uint32_t)below(8);
            p[2] = (uint8_t)((p[2] & ~1) | (channels >> 2));
            p[3] = (uint8_t)((p[3] & 0x3F) | ((channels & 3) << 6));
            break;
        }
        case 2: p[2] = (uint8_t)((p[2] & 0xC3) | ((uint8_t)below(16) << 2)); break;
        default: p[6] = (uint8_t)((p[6] & 0xFC) | below(4)); break;
        }
        return 1;
    }
    case 11: {  // a splice: the start of this file, the rest of another
        if (other == NULL || other->size == 0) return 0;
        size_t keep = below(b->size + 1);
        size_t from = below(other->size);
        b->size = keep;
        insert_at(b, keep, other->data + from, other->size - from);
        return 1;
    }
    default: {  // a 32-bit extreme value at a random 4-aligned place
        if (b->size < 4) return 0;
        size_t at = below(b->size / 4) * 4;
        if (below(2)) put_be32(b->data + at, interesting32(get_be32(b->data + at)));
        else put_le32(b->data + at, interesting32(get_le32(b->data + at)));
        return 1;
    }
    }
}

// MARK: The run loop

static int by_name(const void *a, const void *b) {
    return strcmp(((const seed_file *)a)->name, ((const seed_file *)b)->name);
}

/// The files of `directory`, sorted by name: the same seeds and --seed make the same inputs.
static int load_seeds(const char *directory, seed_file **seeds) {
    DIR *dir = opendir(directory);
    if (dir == NULL) {
        fprintf(stderr, "decoder-fuzz: cannot open %s: %s\n", directory, strerror(errno));
        exit(2);
    }
    int count = 0, capacity = 0;
    struct dirent *entry;
    while ((entry = readdir(dir)) != NULL) {
        if (entry->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", directory, entry->d_name);
        FILE *file = fopen(path, "rb");
        if (file == NULL) continue;
        if (count == capacity) {
            capacity = capacity ? capacity * 2 : 16;
            *seeds = realloc(*seeds, (size_t)capacity * sizeof **seeds);
        }
        seed_file *seed = &(*seeds)[count];
        memset(seed, 0, sizeof *seed);
        snprintf(seed->name, sizeof seed->name, "%s", entry->d_name);
        const char *dot = strrchr(entry->d_name, '.');
        snprintf(seed->suffix, sizeof seed->suffix, "%s", dot != NULL ? dot : "");
        snprintf(seed->stem, sizeof seed->stem, "%.*s", (int)(dot != NULL ? dot - entry->d_name : (long)strlen(entry->d_name)),
                 entry->d_name);
        uint8_t chunk[65536];
        size_t n;
        while ((n = fread(chunk, 1, sizeof chunk, file)) > 0) insert_at(&seed->content, seed->content.size, chunk, n);
        fclose(file);
        count++;
    }
    closedir(dir);
    if (count > 0) qsort(*seeds, (size_t)count, sizeof **seeds, by_name);
    return count;
}

static void write_file(const char *path, const bytes *b) {
    FILE *file = fopen(path, "wb");
    if (file == NULL || (b->size > 0 && fwrite(b->data, 1, b->size, file) != b->size) || fclose(file) != 0) {
        fprintf(stderr, "decoder-fuzz: cannot write %s\n", path);
        exit(2);
    }
}

static void copy_file(const char *from, const char *to) {
    FILE *in = fopen(from, "rb");
    FILE *out = fopen(to, "wb");
    if (in != NULL && out != NULL) {
        char chunk[65536];
        size_t n;
        while ((n = fread(chunk, 1, sizeof chunk, in)) > 0) fwrite(chunk, 1, n, out);
    }
    if (in != NULL) fclose(in);
    if (out != NULL) fclose(out);
}

static double seconds_of(struct timespec t) {
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/// Ends the child when it runs past the CPU or wall-time bound or the RSS bound: a hang or a
/// runaway allocation is a failure with its input kept, not a stuck run.
static void *watchdog(void *unused) {
    (void)unused;
    struct timespec wall_start;
    clock_gettime(CLOCK_MONOTONIC, &wall_start);
    long page = sysconf(_SC_PAGESIZE);
    for (;;) {
        struct timespec pause = {0, 20 * 1000 * 1000};
        nanosleep(&pause, NULL);
        struct timespec cpu, wall;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
        clock_gettime(CLOCK_MONOTONIC, &wall);
        if (seconds_of(cpu) > cpu_seconds || seconds_of(wall) - seconds_of(wall_start) > 3 * cpu_seconds) {
            fprintf(stderr, "decoder-fuzz: past the time bound (%.1f s of CPU, %.1f s of wall time)\n", seconds_of(cpu),
                    seconds_of(wall) - seconds_of(wall_start));
            _exit(EXIT_TIMEOUT);
        }
        FILE *statm = fopen("/proc/self/statm", "r");
        long size = 0, resident = 0;
        if (statm != NULL) {
            if (fscanf(statm, "%ld %ld", &size, &resident) != 2) resident = 0;
            fclose(statm);
        }
        if (resident * page / (1024 * 1024) > rss_limit_mb) {
            fprintf(stderr, "decoder-fuzz: past the memory bound (%ld MB resident)\n", resident * page / (1024 * 1024));
            _exit(EXIT_MEMORY);
        }
    }
    return NULL;
}

/// The child: bounds, then the file, then exit (LeakSanitizer checks at exit).
static void child(const char *path, const char *log, uint64_t run_seed) {
    int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    struct rlimit cpu = {(rlim_t)cpu_seconds + 5, (rlim_t)cpu_seconds + 10};
    setrlimit(RLIMIT_CPU, &cpu);
    alarm((unsigned)(4 * cpu_seconds) + 10);
    pthread_t thread;
    pthread_create(&thread, NULL, watchdog, NULL);
    pthread_detach(thread);
    rng_state = run_seed ^ 0xD1B54A32D192ED03ULL;
    outcome result = exercise(path);
    exercise_stream(path);
    // Tell the parent what happened through the exit code's low bits: 0..63 are outcomes.
    int code = result.opened ? (result.read_error ? 1 : 0) | (result.runaway ? 2 : 0) : 8 + (int)result.status;
    exit(code);
}

/// The input of run `run`: a seed, mutated 1 to 3 times, and the suffix it is written with (the
/// seed's, or one in 16 times a lying one). The same `seed` and `run` always make the same input.
static const seed_file *make_input(long run, uint64_t seed, const seed_file *seeds, int seed_count, bytes *input,
                                   char *described, size_t described_size, const char **suffix, long *mutations_used) {
    static const char *const lying_suffixes[] = {".mp3", ".flac", ".ogg", ".wav", ".m4a", ".aac", ".wv", ".mp4", ""};
    rng_state = seed * 0x100000001B3ULL + (uint64_t)run;
    const seed_file *source = &seeds[below((uint64_t)seed_count)];
    input->size = 0;
    insert_at(input, 0, source->content.data, source->content.size);
    int stacked = 1 + (int)below(3);
    described[0] = 0;
    for (int i = 0; i < stacked; i++) {
        int kind = (int)below(mutation_count);
        const bytes *other = &seeds[below((uint64_t)seed_count)].content;
        if (mutate(input, kind, other)) {
            mutations_used[kind]++;
            size_t used = strlen(described);
            snprintf(described + used, described_size - used, "%s%s", used ? "+" : "", mutation_names[kind]);
        }
    }
    *suffix = below(16) == 0 ? lying_suffixes[below(sizeof lying_suffixes / sizeof lying_suffixes[0])] : source->suffix;
    return source;
}

/// Runs `runs` mutated inputs in forked children (or, with `emit`, only writes them there).
static int fuzz(const char *seeds_dir, const char *out, long runs, uint64_t seed, const char *emit) {
    seed_file *seeds = NULL;
    int seed_count = load_seeds(seeds_dir, &seeds);
    if (seed_count == 0) {
        fprintf(stderr, "decoder-fuzz: no seed files in %s\n", seeds_dir);
        return 2;
    }
    const char *why = reel_ff_load();  // once, before the children fork: each starts with FFmpeg loaded
    if (why != NULL) {
        fprintf(stderr, "decoder-fuzz: %s\n", why);
        return 2;
    }
    char work[4096], failures[4096], log[4096];
    if (emit != NULL) {
        mkdir(emit, 0755);
    } else {
        snprintf(work, sizeof work, "%s/work", out);
        snprintf(failures, sizeof failures, "%s/failures", out);
        snprintf(log, sizeof log, "%s/run.log", work);
        mkdir(out, 0755);
        mkdir(work, 0755);
        mkdir(failures, 0755);
    }

    long crashes = 0, timeouts = 0, memory = 0, leaks = 0, contract = 0, opened = 0, read_errors = 0, runaway = 0;
    long refused[6] = {0};
    long mutations_used[mutation_count] = {0};
    long max_rss_kb = 0;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    bytes input = {0};
    for (long run = 0; run < runs; run++) {
        char described[256];
        const char *suffix;
        const seed_file *source = make_input(run, seed, seeds, seed_count, &input, described, sizeof described, &suffix,
                                             mutations_used);
        if (emit != NULL) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%06ld-%s%s", emit, run, source->stem, suffix);
            write_file(path, &input);
            continue;
        }
        char path[4096];
        snprintf(path, sizeof path, "%s/input%s", work, suffix);
        write_file(path, &input);

        uint64_t run_seed = next_random();
        fflush(stdout);
        fflush(stderr);
        pid_t pid = fork();
        if (pid < 0) {
            perror("decoder-fuzz: fork");
            return 2;
        }
        if (pid == 0) child(path, log, run_seed);
        int status = 0;
        struct rusage usage;
        while (wait4(pid, &status, 0, &usage) < 0) {
            if (errno != EINTR) {
                perror("decoder-fuzz: wait4");
                return 2;
            }
        }
        unlink(path);
        if (usage.ru_maxrss > max_rss_kb) max_rss_kb = usage.ru_maxrss;
        const char *failure = NULL;
        if (WIFEXITED(status) && WEXITSTATUS(status) < 64) {
            int code = WEXITSTATUS(status);
            if (code >= 8) {
                int verdict = code - 8;
                if (verdict >= 0 && verdict < 6) refused[verdict]++;
            } else {
                opened++;
                if (code & 1) read_errors++;
                if (code & 2) runaway++;
            }
        } else if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_TIMEOUT) {
            failure = "timeout", timeouts++;
        } else if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_MEMORY) {
            failure = "memory", memory++;
        } else if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_CONTRACT) {
            failure = "contract", contract++;
        } else if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGXCPU || WTERMSIG(status) == SIGALRM ||
                                           WTERMSIG(status) == SIGKILL)) {
            failure = "timeout", timeouts++;
        } else {
            // A sanitizer's report (its exit code) or a signal: a leak is told apart by its log.
            failure = "crash";
            FILE *file = fopen(log, "r");
            if (file != NULL) {
                char line[1024];
                while (fgets(line, sizeof line, file) != NULL) {
                    if (strstr(line, "LeakSanitizer") != NULL) failure = "leak";
                }
                fclose(file);
            }
            if (strcmp(failure, "leak") == 0) leaks++;
            else crashes++;
        }
        if (failure != NULL) {
            char kept[4096], kept_log[4096];
            snprintf(kept, sizeof kept, "%s/%s-%06ld-%s%s", failures, failure, run, source->stem, suffix);
            snprintf(kept_log, sizeof kept_log, "%s.log", kept);
            write_file(kept, &input);
            copy_file(log, kept_log);
            fprintf(stderr, "decoder-fuzz: run %ld (%s of %s, %zu bytes): %s; kept %s\n", run, described, source->name,
                    input.size, failure, kept);
        }
        if ((run + 1) % 1000 == 0) {
            clock_gettime(CLOCK_MONOTONIC, &now);
            fprintf(stderr, "decoder-fuzz: %ld runs, %.0f s, %ld failures\n", run + 1, seconds_of(now) - seconds_of(start),
                    crashes + timeouts + memory + leaks + contract);
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    double wall = seconds_of(now) - seconds_of(start);
    free(input.data);
    for (int i = 0; i < seed_count; i++) free(seeds[i].content.data);
    free(seeds);
    if (emit != NULL) {
        printf("wrote %ld inputs to %s\n", runs, emit);
        return 0;
    }
    printf("runs=%ld opened=%ld refused=%ld (unsupported=%ld corrupt=%ld io=%ld not_loaded=%ld unknown_format=%ld) "
           "read_errors=%ld runaway=%ld crashes=%ld timeouts=%ld memory=%ld leaks=%ld contract=%ld "
           "max_rss_mb=%.1f wall_s=%.0f runs_per_s=%.1f\n",
           runs, opened, refused[1] + refused[2] + refused[3] + refused[4] + refused[5], refused[1], refused[2], refused[3],
           refused[4], refused[5], read_errors, runaway, crashes, timeouts, memory, leaks, contract, max_rss_kb / 1024.0, wall,
           runs / (wall > 0 ? wall : 1));
    printf("mutations:");
    for (int i = 0; i < mutation_count; i++) printf(" %s=%ld", mutation_names[i], mutations_used[i]);
    printf("\n");
    return crashes + timeouts + memory + leaks + contract > 0 ? 1 : 0;
}

static int replay(int count, char **paths) {
    rng_state = 1;
    for (int i = 0; i < count; i++) {
        printf("%s: ", paths[i]);
        fflush(stdout);
        outcome result = exercise(paths[i]);
        exercise_stream(paths[i]);
        if (result.opened) {
            printf("opened, %lld frames read%s%s\n", (long long)result.frames_read, result.read_error ? ", a read failed" : "",
                   result.runaway ? ", runaway" : "");
        } else {
            printf("refused (status %d)\n", result.status);
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    const char *seeds = NULL, *out = NULL, *emit = NULL;
    long runs = 10000;
    uint64_t seed = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--replay") == 0) return replay(argc - i - 1, argv + i + 1);
        if (i + 1 >= argc) {
            fprintf(stderr, "decoder-fuzz: %s needs a value\n", argv[i]);
            return 2;
        }
        const char *value = argv[++i];
        if (strcmp(argv[i - 1], "--seeds") == 0) seeds = value;
        else if (strcmp(argv[i - 1], "--out") == 0) out = value;
        else if (strcmp(argv[i - 1], "--emit") == 0) emit = value;
        else if (strcmp(argv[i - 1], "--runs") == 0) runs = atol(value);
        else if (strcmp(argv[i - 1], "--seed") == 0) seed = strtoull(value, NULL, 10);
        else if (strcmp(argv[i - 1], "--cpu-seconds") == 0) cpu_seconds = atof(value);
        else if (strcmp(argv[i - 1], "--rss-mb") == 0) rss_limit_mb = atol(value);
        else {
            fprintf(stderr, "decoder-fuzz: unknown option %s\n", argv[i - 1]);
            return 2;
        }
    }
    if (seeds == NULL || (out == NULL && emit == NULL)) {
        fprintf(stderr, "usage: decoder-fuzz --seeds DIR --out DIR [--runs N] [--seed S] [--cpu-seconds N] [--rss-mb N]\n"
                        "       decoder-fuzz --seeds DIR --emit DIR [--runs N] [--seed S]\n"
                        "       decoder-fuzz --replay FILE...\n");
        return 2;
    }
    return fuzz(seeds, out, runs, seed, emit);
}
