/* error.c -- the thread-local "last error" message behind ggml_last_error(). */
#include "internal.h"

#include <stdio.h>

#if defined(_MSC_VER)
#define GGMLR_THREAD_LOCAL __declspec(thread)
#else
#define GGMLR_THREAD_LOCAL _Thread_local
#endif

static GGMLR_THREAD_LOCAL char last_error[512];

void ggmlr_set_error(const char * fmt, ...) {
    char msg[sizeof last_error];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);  /* via a copy: fmt's args may quote last_error */
    va_end(ap);
    memcpy(last_error, msg, sizeof msg);
}

const char * ggml_last_error(void) { return last_error; }

void ggml_clear_error(void) { last_error[0] = '\0'; }

const char * ggml_status_to_string(enum ggml_status status) {
    switch (status) {
        case GGML_STATUS_ALLOC_FAILED: return "GGML status: error (failed to allocate memory)";
        case GGML_STATUS_FAILED:       return "GGML status: error (operation failed)";
        case GGML_STATUS_SUCCESS:      return "GGML status: success";
        case GGML_STATUS_ABORTED:      return "GGML status: warning (operation aborted)";
    }
    return "GGML status: unknown";
}
