# bindings.R -- writes the R side of the op bindings from tools/bindings.def.
#
#   Rscript r/tools/bindings.R           rewrite the generated files
#   Rscript r/tools/bindings.R --check   list the stale ones, exit status 1 if any
#
# Base R only, so that it runs wherever the package builds. Generated: the
# whole of src/glue_bindings.c and R/bindings.R, and the block between the
# BEGIN/END marker lines of src/entry_points.h, R/constants.R, NAMESPACE and
# each page's man/<page>.Rd. The enums' values are read from include/ggml.h. tests/testthat/test-bindings.R calls bindings_stale().

# kind -> the C type of the converted argument and its conversion (%s: the
# SEXP, then the argument's name for error messages)
bindings_kinds <- list(
  "tensor"  = c("struct ggml_tensor *", "TENSOR(ctx, %s, \"%s\")"),
  "tensor?" = c("struct ggml_tensor *", "TENSOR_OR_NULL(ctx, %s, \"%s\")"),
  "float"   = c("float", "rg_float(%s, \"%s\")"),
  "int"     = c("int", "rg_int(%s, \"%s\")"),
  "int32"   = c("int32_t", "rg_int(%s, \"%s\")"),
  "count"   = c("int64_t", "rg_count(%s, \"%s\")"),
  "bytes"   = c("size_t", "rg_bytes(%s, \"%s\")"),
  "logical" = c("bool", "rg_bool(%s, \"%s\")")
)

bindings_kind <- function(kind, where) {
  if (grepl("^enum [a-z_][a-z0-9_]*$", kind)) return(c(kind, sprintf("(%s) rg_int(%%s, \"%%s\")", kind)))
  k <- bindings_kinds[[kind]]
  if (is.null(k)) stop(where, ": unknown kind '", kind, "'", call. = FALSE)
  k
}

# "a: tensor, mask: tensor? = NULL" -> data frame name, kind, default (NA: none)
bindings_parse_args <- function(text, where) {
  parts <- trimws(strsplit(text, ",", fixed = TRUE)[[1]])
  if (length(parts) == 0 || parts[1] != "ctx") stop(where, ": the first argument must be ctx", call. = FALSE)
  m <- regmatches(parts[-1], regexec("^([A-Za-z_][A-Za-z0-9_]*): *([^=]*[^= ]) *(= *(.+))?$", parts[-1]))
  bad <- lengths(m) == 0
  if (any(bad)) stop(where, ": cannot read argument '", parts[-1][bad][1], "'", call. = FALSE)
  args <- data.frame(name = vapply(m, `[`, "", 2), kind = vapply(m, `[`, "", 3),
                     default = vapply(m, function(x) if (nzchar(x[5])) x[5] else NA_character_, ""))
  for (i in seq_len(nrow(args))) bindings_kind(args$kind[i], where)
  if (anyDuplicated(c("ctx", args$name))) stop(where, ": an argument name is repeated", call. = FALSE)
  args
}

# The enumerators of C's `enum <name> { ... };` in the header text, as a
# named integer vector (C's rule: each is its `= value` or the one before + 1).
bindings_header_enum <- function(hdr, name, where) {
  body <- regmatches(hdr, regexec(sprintf("enum %s \\{([^}]*)\\}", name), hdr))[[1]]
  if (length(body) == 0) stop(where, ": include/ggml.h has no enum ", name, call. = FALSE)
  text <- gsub("/\\*.*?\\*/|//[^\n]*", "", body[2], perl = TRUE)
  items <- Filter(nzchar, trimws(strsplit(text, ",", fixed = TRUE)[[1]]))
  values <- integer(0); nxt <- 0L
  for (it in items) {
    m <- regmatches(it, regexec("^([A-Z][A-Z0-9_]*)\\s*(=\\s*(-?[0-9]+))?$", it))[[1]]
    if (length(m) == 0) stop(where, ": cannot read enumerator '", it, "' of enum ", name, call. = FALSE)
    v <- if (nzchar(m[4])) as.integer(m[4]) else nxt
    values[m[2]] <- v; nxt <- v + 1L
  }
  values[!grepl("_COUNT$", names(values))]  # a count is not a value
}

# include/ggml.h, beside the package in the repository or copied into it by configure
bindings_header <- function(rdir) {
  for (f in c(file.path(rdir, "..", "include", "ggml.h"), file.path(rdir, "src", "ggmlr", "include", "ggml.h")))
    if (file.exists(f)) return(paste(readLines(f, warn = FALSE), collapse = "\n"))
  stop("include/ggml.h is neither beside r/ nor in r/src/ggmlr", call. = FALSE)
}

# The table: list(pages = list(<page> = list(args = list(<names> = text))),
# ops = list of list(name, page, args, doc), enums = list of list(name, page,
# doc, values)), checked: every argument of an op documented exactly once on
# its page, every documented argument used.
bindings_read <- function(path, hdr = bindings_header(dirname(dirname(path)))) {
  lines <- readLines(path, warn = FALSE)
  pages <- list(); ops <- list(); enums <- list(); page <- NULL
  for (i in seq_along(lines)) {
    line <- lines[i]; where <- sprintf("%s:%d", basename(path), i)
    if (grepl("^\\s*(#|$)", line)) next
    if (grepl("^page ", line)) {
      page <- sub("^page +", "", line)
      if (!is.null(pages[[page]])) stop(where, ": page ", page, " given twice", call. = FALSE)
      pages[[page]] <- list(args = list())
      next
    }
    if (is.null(page)) stop(where, ": a page line must come first", call. = FALSE)
    if (grepl("^arg ", line)) {
      m <- regmatches(line, regexec("^arg ([A-Za-z0-9_, ]+): (.+)$", line))[[1]]
      if (length(m) == 0) stop(where, ": cannot read the arg line", call. = FALSE)
      pages[[page]]$args[[m[2]]] <- m[3]
    } else if (grepl("^op ", line)) {
      m <- regmatches(line, regexec("^op ([a-z_][a-z0-9_]*)\\(([^)]*)\\): (.+)$", line))[[1]]
      if (length(m) == 0) stop(where, ": cannot read the op line", call. = FALSE)
      if (m[2] %in% vapply(ops, `[[`, "", "name")) stop(where, ": ", m[2], " given twice", call. = FALSE)
      ops[[length(ops) + 1]] <- list(name = m[2], page = page, args = bindings_parse_args(m[3], where), doc = m[4])
    } else if (grepl("^enum ", line)) {
      m <- regmatches(line, regexec("^enum ([a-z_][a-z0-9_]*): (.+)$", line))[[1]]
      if (length(m) == 0) stop(where, ": cannot read the enum line", call. = FALSE)
      enums[[length(enums) + 1]] <- list(name = m[2], page = page, doc = m[3], values = bindings_header_enum(hdr, m[2], where))
    } else {
      stop(where, ": a line must start with page, arg, op, enum or #", call. = FALSE)
    }
  }
  for (p in names(pages)) {
    documented <- trimws(unlist(strsplit(as.character(names(pages[[p]]$args)), ",")))  # a page of enums only has none
    page_ops <- Filter(function(o) o$page == p, ops)
    used <- if (length(page_ops)) c("ctx", unlist(lapply(page_ops, function(o) o$args$name))) else character(0)
    problem <- c(setdiff(used, documented), documented[duplicated(documented)], setdiff(documented, used))
    if (length(problem)) stop("page ", p, ": argument ", problem[1], " is undocumented, documented twice or unused", call. = FALSE)
  }
  list(pages = pages, ops = ops, enums = enums)
}

bindings_usage <- function(op) {
  a <- op$args
  shown <- ifelse(is.na(a$default), a$name, paste(a$name, "=", a$default))
  sprintf("%s(%s)", op$name, paste(c("ctx", shown), collapse = ", "))
}

bindings_c <- function(tab) {
  fn <- function(op) {
    a <- op$args
    kinds <- lapply(a$kind, bindings_kind, where = op$name)
    convert <- vapply(seq_len(nrow(a)), function(i) {
      ctype <- kinds[[i]][1]; name <- a$name[i]
      decl <- if (endsWith(ctype, "*")) paste(ctype, name) else paste("const", ctype, name)
      sprintf("    %s = %s;", decl, sprintf(kinds[[i]][2], paste0("r_", name), name))
    }, "")
    c(sprintf("/* %s */", bindings_usage(op)),
      sprintf("SEXP R_%s(%s) {", op$name, paste0("SEXP r_", c("ctx", a$name), collapse = ", ")),
      "    rg_ctx * ctx = rg_ctx_get(r_ctx, \"ctx\");",
      convert,
      sprintf("    return FINISH(r_ctx, \"%s\", %s(%s));", op$name, op$name, paste(c("ctx->ctx", a$name), collapse = ", ")),
      "}", "")
  }
  c("/* glue_bindings.c -- the op constructors (lazy: each records a node in ctx).",
    " *",
    " * GENERATED by tools/bindings.R from tools/bindings.def: edit the table and",
    " * rerun it (Rscript r/tools/bindings.R), not this file. Each wrapper checks",
    " * the context, converts every argument in order (glue.h), calls the",
    " * constructor, and wraps the result or fails with the library's message. */",
    "#include \"glue.h\"", "",
    unlist(lapply(tab$ops, fn), use.names = FALSE))
}

bindings_r <- function(tab) {
  fn <- function(op) {
    head <- sprintf("%s <- function%s", op$name, sub("^[a-z0-9_]+", "", bindings_usage(op)))
    body <- sprintf(".Call(C_%s, %s)", op$name, paste(c("ctx", op$args$name), collapse = ", "))
    one <- paste(head, body)
    if (nchar(one) <= 100) one else c(paste(head, "{"), paste0("  ", body), "}")
  }
  out <- c("# Op constructors (lazy: each records a node in ctx; src/glue_bindings.c).",
           "# GENERATED by tools/bindings.R from tools/bindings.def: edit the table and",
           "# rerun it (Rscript r/tools/bindings.R), not this file.")
  for (p in names(tab$pages)) {
    out <- c(out, "", sprintf("# ?\"%s\"", p))
    for (op in Filter(function(o) o$page == p, tab$ops)) out <- c(out, fn(op))
  }
  out
}

# the constants of every enum: one block of R/constants.R
bindings_constants <- function(tab) {
  unlist(lapply(tab$enums, function(e)
    c(sprintf("# enum %s (include/ggml.h)", e$name), sprintf("%s <- %dL", names(e$values), e$values))), use.names = FALSE)
}

bindings_rd <- function(tab, p) {
  ops <- Filter(function(o) o$page == p, tab$ops)
  enums <- Filter(function(e) e$page == p, tab$enums)
  args <- tab$pages[[p]]$args
  consts <- unlist(lapply(enums, function(e) names(e$values)))
  out <- paste0("\\alias{", c(vapply(ops, `[[`, "", "name"), consts), "}")
  if (length(ops))
    out <- c(out, "\\usage{", vapply(ops, bindings_usage, ""), "}",
             "\\arguments{", sprintf("  \\item{%s}{%s}", names(args), unlist(args)), "}",
             "\\section{Ops}{", "\\describe{",
             sprintf("  \\item{\\code{%s}}{%s}", vapply(ops, `[[`, "", "name"), vapply(ops, `[[`, "", "doc")),
             "}", "}")
  if (length(enums))
    out <- c(out, "\\section{Constants}{", "\\describe{",
             unlist(lapply(enums, function(e) c(sprintf("  \\item{\\code{enum %s}}{%s: %s.}", e$name, e$doc,
                                                       paste(sprintf("\\code{%s} (%d)", names(e$values), e$values), collapse = ", "))))),
             "}", "}")
  out
}

# lines with the block between the marker lines (kept) replaced by block
bindings_splice <- function(lines, block, begin, end, file) {
  b <- which(lines == begin); e <- which(lines == end)
  if (length(b) != 1 || length(e) != 1 || e < b) stop(file, ": needs one line '", begin, "' and after it one '", end, "'", call. = FALSE)
  c(lines[seq_len(b)], block, lines[e:length(lines)])
}

# file (relative to r/) -> its generated content
bindings_outputs <- function(rdir) {
  tab <- bindings_read(file.path(rdir, "tools", "bindings.def"), bindings_header(rdir))
  current <- function(f) readLines(file.path(rdir, f), warn = FALSE)
  out <- list("src/glue_bindings.c" = bindings_c(tab), "R/bindings.R" = bindings_r(tab))
  out[["R/constants.R"]] <- bindings_splice(current("R/constants.R"), bindings_constants(tab),
    "# BEGIN generated by tools/bindings.R from the enum lines of tools/bindings.def", "# END generated", "R/constants.R")
  names_ <- c(vapply(tab$ops, `[[`, "", "name"), unlist(lapply(tab$enums, function(e) names(e$values))))
  out[["src/entry_points.h"]] <- bindings_splice(current("src/entry_points.h"),
    sprintf("ENTRY(%s, %d)", vapply(tab$ops, `[[`, "", "name"), vapply(tab$ops, function(o) nrow(o$args) + 1L, 0L)),
    "/* BEGIN generated by tools/bindings.R: glue_bindings.c */", "/* END generated */", "src/entry_points.h")
  out[["NAMESPACE"]] <- bindings_splice(current("NAMESPACE"), sprintf("export(%s)", sort(names_, method = "radix")),
    "# BEGIN generated by tools/bindings.R", "# END generated", "NAMESPACE")
  for (p in names(tab$pages)) {
    f <- sprintf("man/%s.Rd", p)
    out[[f]] <- bindings_splice(current(f), bindings_rd(tab, p),
      "% BEGIN generated by tools/bindings.R from tools/bindings.def", "% END generated", f)
  }
  out
}

# the generated files whose content differs from what the table gives
bindings_stale <- function(rdir) {
  out <- bindings_outputs(rdir)
  same <- vapply(names(out), function(f) {
    p <- file.path(rdir, f)
    file.exists(p) && identical(readLines(p, warn = FALSE), out[[f]])
  }, TRUE)
  names(out)[!same]
}

if (sys.nframe() == 0L) {
  rdir <- normalizePath(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))), ".."))
  if ("--check" %in% commandArgs(TRUE)) {
    stale <- bindings_stale(rdir)
    if (length(stale)) {
      cat("stale (run Rscript r/tools/bindings.R):", stale, sep = "\n  ")
      quit(status = 1)
    }
  } else {
    out <- bindings_outputs(rdir)
    for (f in names(out)) writeLines(out[[f]], file.path(rdir, f))
  }
}
