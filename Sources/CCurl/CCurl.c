// libcurl through dlopen: see include/CCurl.h.

#define CURL_DISABLE_TYPECHECK 1
#include "CCurl.h"

#include "CDynamicLibrary.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct {
    __typeof__(curl_global_init) *global_init;
    __typeof__(curl_easy_init) *easy_init;
    __typeof__(curl_easy_setopt) *easy_setopt;
    __typeof__(curl_easy_perform) *easy_perform;
    __typeof__(curl_easy_getinfo) *easy_getinfo;
    __typeof__(curl_easy_cleanup) *easy_cleanup;
    __typeof__(curl_easy_strerror) *easy_strerror;
    __typeof__(curl_slist_append) *slist_append;
    __typeof__(curl_slist_free_all) *slist_free_all;
} functions;

/// Whether the process's first body byte was seen: loading libcurl and connecting (its TLS
/// library's set-up, the resolver) touched code that a stream never runs again, and it goes
/// back then (`reel_loaded_pages_release`).
static int released_after_first_body;

/// A transfer whose body has come for this long has started playing: what starting it touched
/// (connecting, the decoder's opening, the device's) is handed back once
/// (`reel_settled_pages_release`), and again when that transfer ends.
#define SETTLED_NANOSECONDS 2000000000LL

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const char *load_error;
static char load_error_text[512];
static int loaded;

static void load(void) {
    const reel_library_symbol symbols[] = {
        REEL_SYMBOL(functions.global_init, "curl_global_init"),
        REEL_SYMBOL(functions.easy_init, "curl_easy_init"),
        REEL_SYMBOL(functions.easy_setopt, "curl_easy_setopt"),
        REEL_SYMBOL(functions.easy_perform, "curl_easy_perform"),
        REEL_SYMBOL(functions.easy_getinfo, "curl_easy_getinfo"),
        REEL_SYMBOL(functions.easy_cleanup, "curl_easy_cleanup"),
        REEL_SYMBOL(functions.easy_strerror, "curl_easy_strerror"),
        REEL_SYMBOL(functions.slist_append, "curl_slist_append"),
        REEL_SYMBOL(functions.slist_free_all, "curl_slist_free_all"),
    };
    if (reel_library_load(REEL_CURL_LIBRARY, symbols, sizeof symbols / sizeof *symbols, load_error_text,
                          sizeof load_error_text) != 0) {
        load_error = load_error_text;
        return;
    }
    // Once, before any other thread uses libcurl (pthread_once orders it before every transfer).
    if (functions.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(load_error_text, sizeof load_error_text, "%s did not initialise", REEL_CURL_LIBRARY);
        load_error = load_error_text;
        return;
    }
    // What the loader touched relocating some 40 libraries (TLS, SSH, LDAP, Kerberos, RTMP,
    // HTTP/2, IDN), most of it never run: about 8 MB resident otherwise.
    reel_loaded_pages_release();
    __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
}

const char *reel_curl_load(void) {
    pthread_once(&once, load);
    return load_error;
}

int reel_curl_loaded(void) {
    return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE);
}

/// Header bytes taken at most from one response (an endless header is an error, not memory).
#define MAX_HEADER_BYTES 65536

typedef struct {
    const reel_curl_request *request;
    size_t header_bytes;
    int aborted;
    /// CLOCK_MONOTONIC at the first body byte (0 before), and whether the transfer has settled.
    long long first_body;
    int settled;
} transfer;

static long long monotonic_nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

static size_t header_callback(char *data, size_t size, size_t count, void *raw) {
    transfer *t = raw;
    size_t length = size * count;
    // A status line starts a response (a redirect's, then the next): its headers count afresh.
    if (length >= 5 && (memcmp(data, "HTTP/", 5) == 0 || memcmp(data, "ICY ", 4) == 0)) t->header_bytes = 0;
    t->header_bytes += length;
    if (t->header_bytes > MAX_HEADER_BYTES) {
        t->aborted = 1;
        return 0;
    }
    size_t line = length;
    while (line > 0 && (data[line - 1] == '\n' || data[line - 1] == '\r')) line--;
    if (t->request->on_header != NULL && t->request->on_header(t->request->context, data, line) != 0) {
        t->aborted = 1;
        return 0;
    }
    return length;
}

static size_t body_callback(char *data, size_t size, size_t count, void *raw) {
    transfer *t = raw;
    size_t length = size * count;
    size_t taken = t->request->on_body(t->request->context, data, length);
    if (taken != length) t->aborted = 1;
    // After the bytes are in the stream's buffer: the decoder need not wait for this.
    if (!__atomic_load_n(&released_after_first_body, __ATOMIC_RELAXED) &&
        !__atomic_exchange_n(&released_after_first_body, 1, __ATOMIC_RELAXED))
        reel_loaded_pages_release();
    if (!t->settled) {
        long long now = monotonic_nanoseconds();
        if (t->first_body == 0) {
            t->first_body = now;
        } else if (now - t->first_body >= SETTLED_NANOSECONDS) {
            t->settled = 1;
            reel_settled_pages_release();
        }
    }
    return taken;
}

static int progress_callback(void *raw, curl_off_t total_down, curl_off_t now_down, curl_off_t total_up,
                             curl_off_t now_up) {
    (void)total_down, (void)now_down, (void)total_up, (void)now_up;
    transfer *t = raw;
    if (t->request->should_stop != NULL && t->request->should_stop(t->request->context) != 0) {
        t->aborted = 1;
        return 1;
    }
    return 0;
}

static reel_curl_stage stage_of(CURLcode code, CURL *handle, const transfer *t) {
    switch (code) {
    case CURLE_OK:
        return REEL_CURL_OK;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
        return REEL_CURL_DNS;
    case CURLE_COULDNT_CONNECT:
        return REEL_CURL_CONNECT;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CIPHER:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
    case CURLE_SSL_INVALIDCERTSTATUS:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_USE_SSL_FAILED:
        return REEL_CURL_TLS;
    case CURLE_TOO_MANY_REDIRECTS:
    case CURLE_UNSUPPORTED_PROTOCOL:
        return REEL_CURL_REDIRECT;
    case CURLE_WRITE_ERROR:
    case CURLE_ABORTED_BY_CALLBACK:
        return t->aborted ? REEL_CURL_ABORTED : REEL_CURL_TRANSFER;
    case CURLE_OPERATION_TIMEDOUT: {
        // Before the connection came up: the connect timeout; after it, the low-speed limit.
        curl_off_t connected = 0;
        functions.easy_getinfo(handle, CURLINFO_CONNECT_TIME_T, &connected);
        return connected == 0 ? REEL_CURL_CONNECT : REEL_CURL_TRANSFER;
    }
    case CURLE_PARTIAL_FILE:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_WEIRD_SERVER_REPLY:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_BAD_CONTENT_ENCODING:
    case CURLE_RANGE_ERROR:
        return REEL_CURL_TRANSFER;
    default:
        return REEL_CURL_OTHER;
    }
}

reel_curl_stage reel_curl_perform(const reel_curl_request *request, reel_curl_outcome *outcome) {
    memset(outcome, 0, sizeof *outcome);
    if (reel_curl_load() != NULL) {
        snprintf(outcome->message, sizeof outcome->message, "%s", load_error);
        return outcome->stage = REEL_CURL_UNAVAILABLE;
    }
    CURL *handle = functions.easy_init();
    if (handle == NULL) {
        snprintf(outcome->message, sizeof outcome->message, "libcurl could not make a transfer");
        return outcome->stage = REEL_CURL_UNAVAILABLE;
    }
    transfer t = {.request = request};
    char error_text[CURL_ERROR_SIZE] = "";
    char range[32];
    struct curl_slist *headers = NULL;
    headers = functions.slist_append(headers, "Accept-Encoding: identity");
    if (request->icy_metadata) headers = functions.slist_append(headers, "Icy-MetaData: 1");

    CURLcode set = CURLE_OK;
#define SET(option, value)                                                                         \
    do {                                                                                           \
        if (set == CURLE_OK) set = functions.easy_setopt(handle, option, value);                   \
    } while (0)
    SET(CURLOPT_URL, request->url);
    SET(CURLOPT_ERRORBUFFER, error_text);
    // http and https only, also through a redirect (no file://, ftp://, …).
    SET(CURLOPT_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
    SET(CURLOPT_FOLLOWLOCATION, 1L);
    SET(CURLOPT_MAXREDIRS, request->max_redirects);
    // Threads: no signals (a DNS timeout by SIGALRM would hit another thread).
    SET(CURLOPT_NOSIGNAL, 1L);
    SET(CURLOPT_SSL_VERIFYPEER, 1L);
    SET(CURLOPT_SSL_VERIFYHOST, 2L);
    if (request->extra_ca_file != NULL && request->extra_ca_file[0] != '\0') {
        // The extra file replaces the default bundle file; the system's CAs stay trusted
        // through their directory (OpenSSL looks in both).
        SET(CURLOPT_CAINFO, request->extra_ca_file);
        SET(CURLOPT_CAPATH, "/etc/ssl/certs");
    }
    SET(CURLOPT_CONNECTTIMEOUT, request->connect_timeout);
    SET(CURLOPT_LOW_SPEED_LIMIT, request->low_speed_limit);
    SET(CURLOPT_LOW_SPEED_TIME, request->low_speed_time);
    SET(CURLOPT_TCP_KEEPALIVE, 1L);
    // No Content-Encoding is asked for, and none is decoded (a gzip bomb stays compressed bytes
    // that no decoder takes).
    SET(CURLOPT_HTTPHEADER, headers);
    SET(CURLOPT_USERAGENT, "Reel");
    if (request->range_start >= 0) {
        snprintf(range, sizeof range, "%lld-", (long long)request->range_start);
        SET(CURLOPT_RANGE, range);
    }
    SET(CURLOPT_HEADERFUNCTION, header_callback);
    SET(CURLOPT_HEADERDATA, &t);
    SET(CURLOPT_WRITEFUNCTION, body_callback);
    SET(CURLOPT_WRITEDATA, &t);
    SET(CURLOPT_NOPROGRESS, 0L);
    SET(CURLOPT_XFERINFOFUNCTION, progress_callback);
    SET(CURLOPT_XFERINFODATA, &t);
#undef SET
    CURLcode code = set;
    if (set != CURLE_OK) {
        snprintf(outcome->message, sizeof outcome->message, "cannot set up the transfer: %s",
                 functions.easy_strerror(set));
        outcome->stage = REEL_CURL_OTHER;
    } else {
        code = functions.easy_perform(handle);
        outcome->stage = stage_of(code, handle, &t);
        if (code != CURLE_OK) {
            snprintf(outcome->message, sizeof outcome->message, "%s",
                     error_text[0] != '\0' ? error_text : functions.easy_strerror(code));
        }
        if (t.header_bytes > MAX_HEADER_BYTES) {
            snprintf(outcome->message, sizeof outcome->message, "the response's header is longer than %d bytes",
                     MAX_HEADER_BYTES);
            outcome->stage = REEL_CURL_TRANSFER;
        }
    }
    long status = 0;
    functions.easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &status);
    outcome->http_status = status;
    functions.easy_cleanup(handle);
    functions.slist_free_all(headers);
    // A stream that played ends: the pages of its decoder, and of what stopping touched.
    if (t.settled) reel_settled_pages_release();
    return outcome->stage;
}
