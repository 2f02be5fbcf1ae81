#!/bin/sh
# check_layers.sh NM OBJECT... -- the layering rule of docs/architecture.md,
# checked on the compiled objects: a symbol an object of stage L uses but does
# not define must be defined in L itself, in a stage L may reach (below), or
# outside the library (libc, libm, pthreads). A stage is the folder below src/
# (".../<target>.dir/src/<stage>/...o"). Run by ctest (test_layers).
#
#   core, quant: each other only (quant's blocks use core's fp16, core's
#                contexts use quant's type sizes)
#   ops, cpu:    core and quant (an op's name and parameters are core's
#                op_list.h, below both its constructor and its kernel)
#   autodiff:    ops, core, quant
#   backend, opt, gguf, mpi: not checked here (they sit on top)
#
# Exit 1 listing every offending reference, 0 when there is none.
set -eu
[ $# -ge 2 ] || { echo "usage: $0 NM OBJECT..." >&2; exit 2; }
nm_tool=$1
shift
# CMake's $<TARGET_OBJECTS> arrives as one ';'-separated argument: split it
set -f
IFS='
'
set -- $(printf '%s\n' "$@" | tr ';' '\n')

"$nm_tool" -P -A "$@" | awk '
BEGIN {
    allow["core"] = " core quant "
    allow["quant"] = " quant core "
    allow["ops"] = " ops core quant "
    allow["cpu"] = " cpu core quant "
    allow["autodiff"] = " autodiff ops core quant "
}
# "path/to/src/<stage>/file.c.o: symbol TYPE [value size]"
{
    file = $1; sub(/:$/, "", file)
    stage = file
    if (!sub(/.*\.dir\/src\//, "", stage)) next
    sub(/\/.*/, "", stage)
    sym = $2; type = $3
    if (type == "U") { n++; ref_sym[n] = sym; ref_stage[n] = stage; ref_file[n] = file }
    else if (type ~ /^[A-TV-Z]$/) { def_stage[sym] = stage; def_file[sym] = file }
    objects[file] = 1
}
END {
    bad = 0
    for (i = 1; i <= n; i++) {
        s = ref_sym[i]; from = ref_stage[i]
        if (!(s in def_stage) || !(from in allow)) continue
        to = def_stage[s]
        if (index(allow[from], " " to " ")) continue
        f = ref_file[i]; sub(/.*\.dir\/src\//, "src/", f)
        g = def_file[s]; sub(/.*\.dir\/src\//, "src/", g)
        printf "layering: %s (%s) uses %s, defined in %s (%s)\n", f, from, s, g, to
        bad++
    }
    nobj = 0
    for (o in objects) nobj++
    if (nobj == 0) { print "layering: no objects read"; exit 2 }
    if (bad) { printf "layering: %d reference(s) from a lower stage to a higher one (docs/architecture.md)\n", bad; exit 1 }
    printf "layering: %d objects, %d references, every one downward\n", nobj, n
}'
