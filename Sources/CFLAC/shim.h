// libFLAC's encoder (Debian's libflac-dev), for the recorder's FLAC takes.
#include <FLAC/stream_encoder.h>

// Exported by libFLAC but declared only in its source tree's protected header (the `flac` tool's
// --no-md5-sum uses it): whether the encoder computes the MD5 of the audio for STREAMINFO.
// Before FLAC__stream_encoder_init_stream; false leaves STREAMINFO's MD5 zero ("not computed").
FLAC_API FLAC__bool FLAC__stream_encoder_set_do_md5(FLAC__StreamEncoder *encoder, FLAC__bool value);

#include <string.h>

// The length of the vendor string libFLAC writes into every VORBIS_COMMENT it makes (a C global
// Swift 6 will not read directly), for sizing the PADDING after it.
static inline size_t reel_flac_vendor_length(void) { return strlen(FLAC__VENDOR_STRING); }
