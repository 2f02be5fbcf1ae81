/* replay.c -- runs a fuzz target's LLVMFuzzerTestOneInput on every file named
 * on the command line, or in a directory named there (its seed inputs and
 * the regress-* inputs of every crash found so far). Without libFuzzer: this
 * is how ctest, under any compiler, keeps those inputs passing. */
#include "fuzz_target.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

static int run_file(const char * path) {
    FILE * f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "replay: cannot open %s\n", path); return 1; }
    uint8_t * data = NULL;
    size_t size = 0, cap = 0;
    for (;;) {
        if (size == cap) {
            cap = cap ? 2 * cap : 4096;
            uint8_t * bigger = realloc(data, cap);
            if (!bigger) { free(data); fclose(f); fprintf(stderr, "replay: out of memory\n"); return 1; }
            data = bigger;
        }
        const size_t n = fread(data + size, 1, cap - size, f);
        if (n == 0) break;
        size += n;
    }
    fclose(f);
    /* an exact-size copy, so that a read past the input's end is caught */
    uint8_t * exact = malloc(size ? size : 1);
    if (!exact) { free(data); return 1; }
    if (size) memcpy(exact, data, size);
    free(data);
    LLVMFuzzerTestOneInput(exact, size);
    free(exact);
    return 0;
}

static int compare_names(const void * a, const void * b) { return strcmp(*(char * const *) a, *(char * const *) b); }

int main(int argc, char ** argv) {
    int n_files = 0, errors = 0;
    for (int a = 1; a < argc; a++) {
        struct stat st;
        if (stat(argv[a], &st) != 0) { fprintf(stderr, "replay: no such file %s\n", argv[a]); errors++; continue; }
        if (!S_ISDIR(st.st_mode)) { errors += run_file(argv[a]); n_files++; continue; }
        DIR * dir = opendir(argv[a]);
        if (!dir) { errors++; continue; }
        char ** names = NULL;
        size_t n = 0, cap = 0;
        for (struct dirent * e; (e = readdir(dir)) != NULL;) {
            if (e->d_name[0] == '.') continue;
            if (n == cap) {
                cap = cap ? 2 * cap : 64;
                char ** bigger = realloc(names, cap * sizeof *names);
                if (!bigger) break;
                names = bigger;
            }
            const size_t len = strlen(argv[a]) + strlen(e->d_name) + 2;
            if ((names[n] = malloc(len)) == NULL) break;
            snprintf(names[n++], len, "%s/%s", argv[a], e->d_name);
        }
        closedir(dir);
        qsort(names, n, sizeof *names, compare_names);  /* a fixed order, for reproducible runs */
        for (size_t i = 0; i < n; i++) {
            fprintf(stderr, "replay: %s\n", names[i]);
            errors += run_file(names[i]);
            n_files++;
            free(names[i]);
        }
        free(names);
    }
    printf("replay: %d inputs, %d errors\n", n_files, errors);
    return errors || n_files == 0 ? 1 : 0;
}
