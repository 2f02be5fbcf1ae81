/* error.c -- the thread-local "last error" message behind ggml_last_error(),
 * and the log callback that receives the library's progress text. */
#include "core/internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

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

/* The R package has no stderr of its own to write to (R CMD check refuses
 * it): there the default drops the text and the package installs a callback
 * that prints through R. */
static void log_default(enum ggml_log_level level, const char * text, void * user_data) {
    (void) level; (void) user_data;
#ifndef GGMLR_R_PACKAGE
    fputs(text, stderr);
    fflush(stderr);
#else
    (void) text;
#endif
}

static ggml_log_callback log_cb = log_default;
static void * log_ud;

void ggml_log_set(ggml_log_callback log_callback, void * user_data) {
    log_cb = log_callback ? log_callback : log_default;
    log_ud = log_callback ? user_data : NULL;
}

void ggml_log_get(ggml_log_callback * log_callback, void ** user_data) {
    if (log_callback) *log_callback = log_cb;
    if (user_data) *user_data = log_ud;
}

void ggmlr_log(enum ggml_log_level level, const char * fmt, ...) {
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    log_cb(level, text, log_ud);
}

/* For programs' own GGML_ASSERT / GGML_ABORT; nothing in the library calls
 * it. In the R package (no stdio, no abort: R CMD check refuses both) the
 * message goes through the log callback, which prints through R, and the
 * process stops at a trap instruction. */
static _Atomic(ggml_abort_callback_t) abort_cb;

ggml_abort_callback_t ggml_set_abort_callback(ggml_abort_callback_t callback) {
    return atomic_exchange(&abort_cb, callback);
}

void ggml_abort(const char * file, int line, const char * fmt, ...) {
    char text[1024];
    size_t n = (size_t) snprintf(text, sizeof text, "%s:%d: ", file, line);
    if (n >= sizeof text) n = sizeof text - 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text + n, sizeof text - n, fmt, ap);
    va_end(ap);
    const ggml_abort_callback_t cb = atomic_load(&abort_cb);
#ifndef GGMLR_R_PACKAGE
    fflush(stdout);
    if (cb) cb(text); else fprintf(stderr, "%s\n", text);
    abort();
#else
    if (cb) cb(text); else ggmlr_log(GGML_LOG_LEVEL_ERROR, "%s\n", text);
    __builtin_trap();
#endif
}
