// A C face on TagLib's C++ API, for ReelTags: what TagLib 1.13's own C API (tag_c.h) cannot give
// (album artist, disc, a full date, multiple values, pictures, the codec of an MP4 file), with
// no global state (tag_c.h keeps every string it returns in one global list).
//
// Every call is safe on several threads at once on different files: each opens its own file
// read-only and keeps nothing between calls.

#ifndef REEL_CTAGLIB_H
#define REEL_CTAGLIB_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    REEL_TAGS_OK = 0,
    /// TagLib knows no format for this file (by its extension nor by its first bytes).
    REEL_TAGS_UNKNOWN_FORMAT = 1,
    /// A format TagLib knows, but its headers cannot be read (corrupt or truncated).
    REEL_TAGS_INVALID = 2,
    /// The headers read, but they describe no audio stream (no rate or no channels).
    REEL_TAGS_NO_AUDIO = 3,
    /// The file could not be opened for reading (`error_number` says why).
    REEL_TAGS_OPEN_FAILED = 4,
    /// TagLib threw (out of memory): nothing was read.
    REEL_TAGS_FAILED = 5,
} ReelTagsStatus;

/// One file's tags and stream. Strings are UTF-8, allocated with malloc, NULL when the file has
/// no such tag or only empty values; a tag with several values (two ARTIST comments, an ID3v2.4
/// frame with several strings) comes joined with "; ". `codec` is static.
typedef struct {
    char *title;
    char *artist;
    char *album;
    char *album_artist;
    /// As tagged: "3", "03", "3/12".
    char *track;
    char *disc;
    char *date;
    char *genre;
    /// `flac`, `mp3`, `vorbis`, `opus`, `wav`, `aiff`, `aac`, `alac`, …; set as soon as the
    /// format is known (also when the status is REEL_TAGS_INVALID or REEL_TAGS_NO_AUDIO).
    const char *codec;
    int sample_rate;
    int channels;
    /// 0 when the file does not say.
    int length_milliseconds;
    /// Whether it embeds at least one picture.
    int has_picture;
    /// errno when the status is REEL_TAGS_OPEN_FAILED.
    int error_number;
    /// ReplayGain, as tagged ("-6.48 dB", "0.988312"): REPLAYGAIN_TRACK_GAIN/PEAK and
    /// REPLAYGAIN_ALBUM_GAIN/PEAK from Vorbis comments, ID3v2 TXXX, APE or MP4 freeform
    /// (----:com.apple.iTunes:replaygain_*) atoms, names matched whatever their case; Opus's
    /// R128_TRACK_GAIN and R128_ALBUM_GAIN (Q7.8 integers). NULL when absent.
    char *replaygain_track_gain;
    char *replaygain_track_peak;
    char *replaygain_album_gain;
    char *replaygain_album_peak;
    char *r128_track_gain;
    char *r128_album_gain;
} ReelTagsInfo;

/// Reads `path` into `info` (zeroed first). Free its strings with reel_tags_info_free, whatever
/// the status.
ReelTagsStatus reel_tags_read(const char *path, ReelTagsInfo *info);
void reel_tags_info_free(ReelTagsInfo *info);

/// An embedded picture: the front cover, else the first picture.
typedef struct {
    /// malloc'd; NULL when the file embeds none.
    unsigned char *bytes;
    size_t count;
    /// As tagged, malloc'd ("image/jpeg"); may be empty (then look at the bytes).
    char *mime_type;
    /// `codec` and `error_number` as in ReelTagsInfo.
    const char *codec;
    int error_number;
} ReelTagsPicture;

/// Reads the picture of `path` into `picture` (zeroed first). Free with reel_tags_picture_free,
/// whatever the status.
ReelTagsStatus reel_tags_picture(const char *path, ReelTagsPicture *picture);
void reel_tags_picture_free(ReelTagsPicture *picture);

/// Writes `count` chapters into the Vorbis comment of `path` (FLAC, Ogg Vorbis or Ogg Opus):
/// every CHAPTERnnn and CHAPTERnnnNAME field already there is removed, then `CHAPTER001=` the
/// first `times` entry ("HH:MM:SS.sss"), `CHAPTER001NAME=` its name when not NULL, and so on.
/// The file is opened read-write and saved in place (the caller works on a copy). Not thread
/// safe: TagLib builds some tables on first write; call from one thread at a time.
/// REEL_TAGS_UNKNOWN_FORMAT: not one of those formats; REEL_TAGS_INVALID: it could not be read
/// or saved; REEL_TAGS_OPEN_FAILED: it could not be opened (`error_number`).
ReelTagsStatus reel_tags_write_chapters(
    const char *path, const char *const *times, const char *const *names, size_t count, int *error_number);

#ifdef __cplusplus
}
#endif

#endif
