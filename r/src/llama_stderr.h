/* llama_stderr.h -- forced into every file of the llama library
 * (ggmlr/examples/llama, see configure): that library reports a failure with
 * fprintf(stderr, "error: ...") and returns false / NULL. Here stderr names
 * no stream and fprintf is the glue's, which keeps the text so that the R
 * error raised for the failure carries it (glue_llama.c), and an R package
 * writes nothing to the process's stderr. Other streams are written as usual. */
#ifndef GGMLR_LLAMA_STDERR_H
#define GGMLR_LLAMA_STDERR_H

#include <stdio.h>

extern char rg_llama_stderr_tag;
int rg_llama_fprintf(FILE * f, const char * fmt, ...);

#undef stderr
#define stderr ((FILE *) (void *) &rg_llama_stderr_tag)
#define fprintf rg_llama_fprintf

#endif
