// libcurl, loaded when the first URL is played rather than when reeld starts: a daemon that
// never plays a stream maps none of it (nor its TLS, HTTP/2 and IDN libraries). Everything
// that touches libcurl is in CCurl.c, compiled against Debian's libcurl4-openssl-dev headers;
// Swift sees one call that performs a whole HTTP(S) transfer with the options that make it safe.
//
// `reel_curl_load` may be called from any thread; a transfer runs on the thread that calls
// `reel_curl_perform` (a stream's own network thread), and its callbacks run there.

#ifndef REEL_CCURL_H
#define REEL_CCURL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The soname loaded: libcurl 4's (Debian's libcurl4, the OpenSSL build).
#define REEL_CURL_LIBRARY "libcurl.so.4"

/// Loads libcurl and initialises it, once for the process (later calls return the first one's
/// result). NULL when it is ready, else why not (a static string).
const char *reel_curl_load(void);

/// True once `reel_curl_load` has loaded libcurl; never loads it (for tests).
int reel_curl_loaded(void);

/// What went wrong, by stage, so that a message can name it.
typedef enum {
    REEL_CURL_OK = 0,
    /// The host name did not resolve.
    REEL_CURL_DNS = 1,
    /// The connection was refused, or did not come up within the connect timeout.
    REEL_CURL_CONNECT = 2,
    /// The TLS handshake failed, or the certificate was not trusted.
    REEL_CURL_TLS = 3,
    /// The server sent less than the low-speed limit for too long (a stall or a trickle), or
    /// the connection dropped, or what it sent was not HTTP.
    REEL_CURL_TRANSFER = 4,
    /// Too many redirects, or a redirect to a scheme other than http/https.
    REEL_CURL_REDIRECT = 5,
    /// A callback asked to stop (the header or body callback refused, or `should_stop`).
    REEL_CURL_ABORTED = 6,
    /// libcurl could not be loaded or set up.
    REEL_CURL_UNAVAILABLE = 7,
    /// Anything else libcurl reports (`message` says what).
    REEL_CURL_OTHER = 8,
} reel_curl_stage;

/// One transfer. Strings are borrowed for the call.
typedef struct {
    const char *url;
    /// A PEM file of CAs trusted besides the system's, or NULL.
    const char *extra_ca_file;
    /// Seconds allowed to connect (and finish TLS).
    long connect_timeout;
    /// Bytes a second below which, for `low_speed_time` seconds, the transfer fails.
    long low_speed_limit;
    long low_speed_time;
    /// Redirects followed at most (http and https only).
    long max_redirects;
    /// The first byte asked for (a Range request), or -1 for the whole resource.
    int64_t range_start;
    /// Asks for ICY metadata (`Icy-MetaData: 1`).
    int icy_metadata;
    void *context;
    /// Each header line as it comes, of every response (redirects' too), without its line end;
    /// an empty line ends a response's headers. Nonzero stops the transfer (ABORTED).
    int (*on_header)(void *context, const char *line, size_t length);
    /// Body bytes. Returns how many it took; anything but `length` stops the transfer.
    size_t (*on_body)(void *context, const char *data, size_t length);
    /// Asked about once a second and whenever data comes: nonzero stops the transfer.
    int (*should_stop)(void *context);
} reel_curl_request;

typedef struct {
    reel_curl_stage stage;
    /// The last response's status (0 when none came).
    long http_status;
    /// libcurl's own sentence for the failure (empty when none).
    char message[256];
} reel_curl_outcome;

/// Performs `request` until the body ends, it fails, or a callback stops it. Fills `outcome`;
/// returns its stage.
reel_curl_stage reel_curl_perform(const reel_curl_request *request, reel_curl_outcome *outcome);

#ifdef __cplusplus
}
#endif

#endif
