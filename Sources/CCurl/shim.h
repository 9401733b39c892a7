#ifndef HAPPY_CCURL_SHIM_H
#define HAPPY_CCURL_SHIM_H

/* libcurl's easy interface, for outgoing HTTP. curl_easy_setopt and curl_easy_getinfo are
 * variadic, which Swift cannot call: each option used is wrapped with its argument's type. */

#include <curl/curl.h>

typedef size_t (*happy_curl_write_function)(char *data, size_t size, size_t count, void *context);

static inline CURLcode happy_curl_global_init(void) { return curl_global_init(CURL_GLOBAL_DEFAULT); }

static inline CURLcode happy_curl_set_url(CURL *curl, const char *url) {
    return curl_easy_setopt(curl, CURLOPT_URL, url);
}
/* Only http and https, also after a redirect. */
static inline CURLcode happy_curl_set_protocols(CURL *curl, const char *list) {
    return curl_easy_setopt(curl, CURLOPT_PROTOCOLS_STR, list);
}
static inline CURLcode happy_curl_set_get(CURL *curl) { return curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L); }
static inline CURLcode happy_curl_set_no_body(CURL *curl) { return curl_easy_setopt(curl, CURLOPT_NOBODY, 1L); }
static inline CURLcode happy_curl_set_custom_method(CURL *curl, const char *method) {
    return curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
}
/* The body is copied, so the caller's buffer need not outlive the call. */
static inline CURLcode happy_curl_set_body(CURL *curl, const void *bytes, long length) {
    CURLcode code = curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE, length);
    return code != CURLE_OK ? code : curl_easy_setopt(curl, CURLOPT_COPYPOSTFIELDS, length > 0 ? bytes : "");
}
static inline CURLcode happy_curl_set_headers(CURL *curl, struct curl_slist *headers) {
    return curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
}
static inline CURLcode happy_curl_set_timeout_ms(CURL *curl, long milliseconds) {
    return curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, milliseconds);
}
/* No signals: the resolver's timeout would otherwise use SIGALRM, unsafe with threads. */
static inline CURLcode happy_curl_set_no_signal(CURL *curl) { return curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L); }
/* "" turns off proxies, also those named by http_proxy and the like. */
static inline CURLcode happy_curl_set_proxy(CURL *curl, const char *proxy) {
    return curl_easy_setopt(curl, CURLOPT_PROXY, proxy);
}
static inline CURLcode happy_curl_set_ca_file(CURL *curl, const char *path) {
    return curl_easy_setopt(curl, CURLOPT_CAINFO, path);
}
static inline CURLcode happy_curl_set_ca_directory(CURL *curl, const char *path) {
    return curl_easy_setopt(curl, CURLOPT_CAPATH, path);
}
static inline CURLcode happy_curl_set_verify_peer(CURL *curl, int verify) {
    return curl_easy_setopt(curl, CURLOPT_SSL_VERIFYPEER, verify ? 1L : 0L);
}
static inline CURLcode happy_curl_set_verify_host(CURL *curl, int verify) {
    return curl_easy_setopt(curl, CURLOPT_SSL_VERIFYHOST, verify ? 2L : 0L);
}
/* buffer: CURL_ERROR_SIZE bytes, alive while the handle is used. */
static inline CURLcode happy_curl_set_error_buffer(CURL *curl, char *buffer) {
    return curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, buffer);
}
static inline CURLcode happy_curl_set_write_function(CURL *curl, happy_curl_write_function function, void *context) {
    CURLcode code = curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, function);
    return code != CURLE_OK ? code : curl_easy_setopt(curl, CURLOPT_WRITEDATA, context);
}

static inline long happy_curl_response_code(CURL *curl) {
    long code = 0;
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &code);
    return code;
}
/* The errno of the last failed connect (ECONNREFUSED...), 0 when none. */
static inline long happy_curl_os_errno(CURL *curl) {
    long number = 0;
    curl_easy_getinfo(curl, CURLINFO_OS_ERRNO, &number);
    return number;
}

/* Macros Swift cannot import. */
static const unsigned int happy_curl_origin_header = CURLH_HEADER;

#endif
