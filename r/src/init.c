/* init.c -- registration of the .Call entry points (R_init_ggmlR).
 *
 * Each entry point R_<name> is registered as "<name>"; the package NAMESPACE
 * (useDynLib(ggmlR, .registration = TRUE, .fixes = "C_")) makes it available
 * to the R code as C_<name>. Dynamic symbol lookup is off: only what is
 * listed in entry_points.h can be called. */
#include "glue.h"

#include <R_ext/Print.h>
#include <R_ext/Rdynload.h>
#include <R_ext/Visibility.h>

/* One row per line of entry_points.h (prototypes come from glue.h). */
#define ENTRY(name, nargs) {#name, (DL_FUNC) &R_##name, nargs},

static const R_CallMethodDef call_methods[] = {
#include "entry_points.h"
    {NULL, NULL, 0}
};

#undef ENTRY

/* The library's progress text (GGMLR_PROFILE, ggml-opt's progress bar) goes
 * to R's console: the package is built with GGMLR_R_PACKAGE, whose default
 * log drops it. It is written by the thread that called into R. */
void rg_log_to_console(enum ggml_log_level level, const char * text, void * user_data) {
    (void) level; (void) user_data;
    REprintf("%s", text);
}

void attribute_visible R_init_ggmlR(DllInfo * dll) {
    ggml_log_set(rg_log_to_console, NULL);
    R_registerRoutines(dll, NULL, call_methods, NULL, NULL);
    R_useDynamicSymbols(dll, FALSE);
    R_forceSymbols(dll, TRUE);
}
