// libcurl (Debian libcurl4-openssl-dev) for Guildhall's own HTTP calls: the
// S3 store and the push gateway (GuildhallFiles/HTTPCall.swift), on worker threads only. Swift
// cannot call C's variadic functions, so curl_easy_setopt and
// curl_easy_getinfo are wrapped here, one function per argument type.
#ifndef GUILDHALL_CCURL_SHIM_H
#define GUILDHALL_CCURL_SHIM_H
#include <curl/curl.h>

static inline CURLcode gh_curl_set_long(CURL *c, CURLoption o, long v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode gh_curl_set_string(CURL *c, CURLoption o, const char *v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode gh_curl_set_pointer(CURL *c, CURLoption o, void *v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode gh_curl_set_offset(CURL *c, CURLoption o, curl_off_t v) { return curl_easy_setopt(c, o, v); }
static inline CURLcode gh_curl_set_headers(CURL *c, struct curl_slist *v) { return curl_easy_setopt(c, CURLOPT_HTTPHEADER, v); }
static inline CURLcode gh_curl_set_write(CURL *c, size_t (*f)(char *, size_t, size_t, void *)) { return curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, f); }
static inline CURLcode gh_curl_set_read(CURL *c, size_t (*f)(char *, size_t, size_t, void *)) { return curl_easy_setopt(c, CURLOPT_READFUNCTION, f); }
static inline CURLcode gh_curl_set_header_callback(CURL *c, size_t (*f)(char *, size_t, size_t, void *)) { return curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, f); }
static inline long gh_curl_status(CURL *c) { long code = 0; curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code); return code; }
#endif
