// Typed wrappers over libcurl's variadic setopt/getinfo calls, which Swift cannot call directly.
// Prefix: ccurl_. Modelled on swift-corelibs-foundation's CFURLSession_easy_setopt_* family.
#ifndef CCURL_SHIM_H
#define CCURL_SHIM_H

#include <curl/curl.h>

// CURLVERSION_NOW is a macro naming another enum constant, which Swift does not import.
static inline const char *ccurl_version(void) {
    return curl_version_info(CURLVERSION_NOW)->version;
}

static inline CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_easy_setopt_off_t(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
static inline CURLcode ccurl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
typedef size_t (*ccurl_data_callback)(char *ptr, size_t size, size_t nmemb, void *userdata);
static inline CURLcode ccurl_easy_setopt_data_callback(CURL *handle, CURLoption option, ccurl_data_callback cb) {
    return curl_easy_setopt(handle, option, cb);
}
typedef int (*ccurl_xferinfo_callback)(void *clientp, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                                       curl_off_t ulnow);
static inline CURLcode ccurl_easy_setopt_xferinfo_callback(CURL *handle, ccurl_xferinfo_callback cb) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, cb);
}
static inline CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
static inline CURLcode ccurl_easy_getinfo_pointer(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}
/// The CURLcode of a CURLMSG_DONE message (a union member Swift cannot name portably).
static inline CURLcode ccurl_multi_msg_result(const CURLMsg *message) {
    return message->data.result;
}
/// Whether a CURLMsg reports a finished transfer.
static inline int ccurl_multi_msg_is_done(const CURLMsg *message) {
    return message->msg == CURLMSG_DONE;
}
/// The CA directory libcurl was built with (NULL if none), so a custom CA file can be added to the system store.
static inline const char *ccurl_version_capath(void) {
    const curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
    return info->age >= CURLVERSION_SEVENTH ? info->capath : NULL;
}
static inline CURLMcode ccurl_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    return curl_multi_setopt(handle, option, value);
}

#endif
