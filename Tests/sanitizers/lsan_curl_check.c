// The check scripts/test.sh runs before every AddressSanitizer suite (docs/RELIABILITY.md "Suppressions"): the
// suppressions of lsan.supp must not hide a curl handle the bridge forgets to free. LeakSanitizer drops a leak when
// any frame of its allocation stack matches a rule, and with the fast unwinder a stack that starts in libcurl (built
// without frame pointers) has only libcurl's frames, so a rule naming libcurl, or a frame libcurl calls, would hide
// everything curl allocates for the bridge's own handles.
//   lsan-curl-check leak    an easy handle made and never cleaned up, as a deinit that stopped calling
//                           curl_easy_cleanup would leave it: LeakSanitizer must report it
//   lsan-curl-check clean   the same handle cleaned up: nothing may be reported (libcurl's global state is freed)
#include <curl/curl.h>
#include <stdio.h>
#include <string.h>

// Out of line, so no register or stack slot of main still points at the handle when LeakSanitizer looks.
__attribute__((noinline)) static void make_handle(int cleanup) {
    CURL *easy = curl_easy_init();
    if (easy == NULL) {
        fputs("curl_easy_init failed\n", stderr);
        return;
    }
    curl_easy_setopt(easy, CURLOPT_URL, "http://127.0.0.1:9/");
    if (cleanup) curl_easy_cleanup(easy);
}

int main(int argc, char **argv) {
    if (argc != 2 || (strcmp(argv[1], "leak") != 0 && strcmp(argv[1], "clean") != 0)) {
        fputs("usage: lsan-curl-check leak|clean\n", stderr);
        return 2;
    }
    curl_global_init(CURL_GLOBAL_DEFAULT);
    make_handle(strcmp(argv[1], "clean") == 0);
    curl_global_cleanup();
    return 0;
}
