# The R API keeps up with the C library: every tensor constructor declared in
# include/ggml.h is a row of the binding table (tools/bindings.def), or bound
# by hand (listed below), or listed with the reason it is not bound. Each row
# has its C declaration's parameter names and types (through its kinds), is
# exported with the table's argument names and defaults and has a help page,
# and the files generated from the table are up to date. A new C op without a
# binding fails here.

# c(ggml_x = "the reason")
not_bound <- c(
  ggml_rope_set_offset = "takes no context: it sets the offset of an existing ROPE node (every row of the table starts with ctx)",
  ggml_map_custom1 = "takes a C callback (no kind for it): R code cannot be called from the library's worker threads",
  ggml_map_custom1_inplace = "takes a C callback (no kind for it): R code cannot be called from the library's worker threads",
  ggml_map_custom2 = "takes a C callback (no kind for it): R code cannot be called from the library's worker threads",
  ggml_map_custom2_inplace = "takes a C callback (no kind for it): R code cannot be called from the library's worker threads",
  ggml_map_custom3 = "takes a C callback (no kind for it): R code cannot be called from the library's worker threads",
  ggml_map_custom3_inplace = "takes a C callback (no kind for it): R code cannot be called from the library's worker threads",
  ggml_custom_4d = "takes a C callback (no kind for it): R code cannot be called from the library's worker threads",
  ggml_custom_inplace = "takes a C callback (no kind for it): R code cannot be called from the library's worker threads",
  ggml_im2col_back = "takes the data's shape as an int64_t pointer (no kind for it); the gradient of ggml_im2col, which autodiff builds",
  ggml_interpolate = "takes its mode and flags as uint32_t (no kind for it); ggml_upscale_ext binds the same op without flags",
  ggml_build_forward_select = "builds a graph, not an op: takes a graph and a C array of tensors (no kind for them)"
)
unbound <- as.character(names(not_bound))

# Constructors that create or look up tensors rather than record an op: they
# have their own glue (src/glue_tensor.c, glue_context.c, glue_graph.c); and
# the multi-section rope ops, whose int array of sections is no kind of the
# table (src/glue_rope_multi.c).
hand_bound <- c("ggml_new_tensor", "ggml_new_tensor_1d", "ggml_new_tensor_2d", "ggml_new_tensor_3d",
                "ggml_new_tensor_4d", "ggml_new_f32", "ggml_dup_tensor", "ggml_view_tensor", "ggml_set_name",
                "ggml_set_f32", "ggml_set_zero", "ggml_get_first_tensor", "ggml_get_next_tensor", "ggml_get_tensor",
                "ggml_graph_get_grad", "ggml_graph_get_grad_acc", "ggml_graph_node", "ggml_graph_get_tensor",
                "ggml_rope_multi", "ggml_rope_multi_inplace", "ggml_rope_multi_back")

repo_file <- function(...) test_path("..", "..", ...)  # r/ when the tests run from the repository
in_repo <- function() file.exists(repo_file("..", "include", "ggml.h"))

# The tensor constructors declared in include/ggml.h: name -> list(names, types)
# of their parameters (declarations may span lines).
header_ops <- function() {
  hdr <- paste(readLines(repo_file("..", "include", "ggml.h")), collapse = "\n")
  decl <- regmatches(hdr, gregexpr("GGML_API struct ggml_tensor \\* ggml_[a-z0-9_]+\\([^)]*\\);", hdr))[[1]]
  ops <- lapply(decl, function(d) {
    params <- trimws(strsplit(gsub("\\s+", " ", sub("^[^(]*\\((.*)\\);$", "\\1", d)), ",")[[1]])
    list(names = sub("^.*[ *]", "", params), types = trimws(sub("[A-Za-z0-9_]+$", "", params)))
  })
  names(ops) <- sub("^GGML_API struct ggml_tensor \\* (ggml_[a-z0-9_]+)\\(.*$", "\\1", decl)
  ops
}

# The generator's functions (bindings_read, bindings_stale, ...), in their own environment.
generator <- function() {
  env <- new.env()
  sys.source(repo_file("tools", "bindings.R"), envir = env)
  env
}

test_that("every op constructor of include/ggml.h is in the table, bound by hand or has a stated reason", {
  skip_if_not(in_repo(), "include/ggml.h is not beside the package (checking a tarball)")
  ops <- names(header_ops())
  expect_gt(length(ops), 40)  # the parse found the constructors
  table <- vapply(generator()$bindings_read(repo_file("tools", "bindings.def"))$ops, `[[`, "", "name")
  expect_gt(length(table), 50)
  expect_equal(setdiff(ops, c(table, hand_bound, unbound)), character(0))
  # the lists stay true: nothing listed twice, nothing listed that is not declared
  expect_equal(intersect(table, c(hand_bound, unbound)), character(0))
  expect_equal(intersect(hand_bound, unbound), character(0))
  expect_equal(setdiff(c(table, hand_bound, unbound), ops), character(0))
  expect_equal(setdiff(hand_bound, getNamespaceExports("ggmlR")), character(0))
})

test_that("every row of the table is exported with the table's argument names and defaults", {
  skip_if_not(in_repo(), "the binding table is not beside the package (checking a tarball)")
  rows <- generator()$bindings_read(repo_file("tools", "bindings.def"))$ops
  ns <- asNamespace("ggmlR")
  for (op in rows) {
    expect_true(op$name %in% getNamespaceExports("ggmlR"), label = op$name)
    f <- formals(get(op$name, envir = ns))
    expect_identical(names(f), c("ctx", op$args$name), label = op$name)
    shown <- vapply(f[-1], function(d) if (identical(d, quote(expr = ))) NA_character_ else deparse(d), "")
    expect_identical(unname(shown), vapply(op$args$default, function(d) if (is.na(d)) d else deparse(str2lang(d)), "", USE.NAMES = FALSE),
                     label = op$name)
  }
})

test_that("every row of the table has the C declaration's parameter names and types", {
  skip_if_not(in_repo(), "include/ggml.h is not beside the package (checking a tarball)")
  gen <- generator()
  decl <- header_ops()
  for (op in gen$bindings_read(repo_file("tools", "bindings.def"))$ops) {
    d <- decl[[op$name]]
    expect_identical(d$names, c("ctx", op$args$name), label = op$name)
    # the C type each kind converts to (tensor? is a tensor that may be NULL)
    kinds <- vapply(op$args$kind, function(k) gen$bindings_kind(k, op$name)[1], "", USE.NAMES = FALSE)
    expect_identical(d$types, c("struct ggml_context *", kinds), label = op$name)
  }
})

test_that("the files generated from the table are up to date", {
  skip_if_not(in_repo(), "the binding table is not beside the package (checking a tarball)")
  stale <- generator()$bindings_stale(repo_file())
  expect_identical(stale, character(0), label = "stale files (run Rscript r/tools/bindings.R)")
})

test_that("the generator refuses a table it cannot honour", {
  skip_if_not(in_repo(), "the binding table is not beside the package (checking a tarball)")
  gen <- generator()
  read <- function(...) {
    f <- tempfile(fileext = ".def")
    on.exit(unlink(f))
    writeLines(c(...), f)
    gen$bindings_read(f, gen$bindings_header(repo_file()))
  }
  ok <- read("page p", "arg ctx: c", "arg a, b: t", "op ggml_add(ctx, a: tensor, b: tensor = NULL): d")
  expect_identical(ok$ops[[1]]$args$default, c(NA, "NULL"))
  expect_error(read("page p", "arg ctx: c", "op ggml_neg(ctx, a: tensor): d"), "argument a is undocumented")
  expect_error(read("page p", "arg ctx: c", "arg a: t", "arg x: u", "op ggml_neg(ctx, a: tensor): d"), "argument x")
  expect_error(read("page p", "arg ctx: c", "arg a: t", "op ggml_neg(ctx, a: matrix): d"), "unknown kind 'matrix'")
  expect_error(read("page p", "arg ctx: c", "arg a: t", "op ggml_neg(a: tensor): d"), "first argument must be ctx")
  expect_error(read("page p", "arg ctx: c", "arg a: t", "op ggml_neg(ctx, a: tensor, a: tensor): d"), "repeated")
  expect_error(read("arg ctx: c"), "page line must come first")
  expect_error(read("page p", "enum ggml_no_such_enum: d"), "has no enum ggml_no_such_enum")
})

test_that("an enum line gives C's values: implicit, explicit and after an explicit one", {
  skip_if_not(in_repo(), "the binding table is not beside the package (checking a tarball)")
  gen <- generator()
  hdr <- "enum other { Z_A = 7 };\nenum e_x {\n  E_A,      /* a comment, with a comma */\n  E_B = 5,\n  E_C, // c\n  E_COUNT,\n};"
  expect_identical(gen$bindings_header_enum(hdr, "e_x", "w"), c(E_A = 0L, E_B = 5L, E_C = 6L))
  expect_error(gen$bindings_header_enum("enum e_y { Y_A = 1 << 2 };", "e_y", "w"), "cannot read enumerator")
  # the exported constants are upstream ggml's numbers
  expect_identical(c(GGML_GLU_OP_SWIGLU, GGML_GLU_OP_GEGLU_QUICK, GGML_UNARY_OP_GELU, GGML_UNARY_OP_TRUNC, GGML_OP_POOL_AVG),
                   c(2L, 5L, 8L, 21L, 1L))
})

test_that("the generated glue converts each kind in order and calls the constructor", {
  skip_if_not(in_repo(), "the binding table is not beside the package (checking a tarball)")
  gen <- generator()
  f <- tempfile(fileext = ".def")
  on.exit(unlink(f))
  writeLines(c("page p", "arg ctx, a, m, f, i, n, o, l, e: x",
               "op ggml_x(ctx, a: tensor, m: tensor? = NULL, f: float = 1, i: int, n: count, o: bytes, l: logical = TRUE, e: enum ggml_sort_order): d"), f)
  tab <- gen$bindings_read(f)
  glue <- gen$bindings_c(tab)
  body <- glue[which(glue == "SEXP R_ggml_x(SEXP r_ctx, SEXP r_a, SEXP r_m, SEXP r_f, SEXP r_i, SEXP r_n, SEXP r_o, SEXP r_l, SEXP r_e) {") + 1:10]
  expect_identical(body, c(
    "    rg_ctx * ctx = rg_ctx_get(r_ctx, \"ctx\");",
    "    struct ggml_tensor * a = TENSOR(ctx, r_a, \"a\");",
    "    struct ggml_tensor * m = TENSOR_OR_NULL(ctx, r_m, \"m\");",
    "    const float f = rg_float(r_f, \"f\");",
    "    const int i = rg_int(r_i, \"i\");",
    "    const int64_t n = rg_count(r_n, \"n\");",
    "    const size_t o = rg_bytes(r_o, \"o\");",
    "    const bool l = rg_bool(r_l, \"l\");",
    "    const enum ggml_sort_order e = (enum ggml_sort_order) rg_int(r_e, \"e\");",
    "    return FINISH(r_ctx, \"ggml_x\", ggml_x(ctx->ctx, a, m, f, i, n, o, l, e));"))
  expect_identical(gen$bindings_r(tab)[-(1:5)], c(  # longer than 100 characters: in braces
    "ggml_x <- function(ctx, a, m = NULL, f = 1, i, n, o, l = TRUE, e) {",
    "  .Call(C_ggml_x, ctx, a, m, f, i, n, o, l, e)",
    "}"))
})

test_that("every export has a help page", {
  index <- system.file("help", "AnIndex", package = "ggmlR")
  skip_if(index == "", "the installed package has no help index")
  aliases <- utils::read.table(index, sep = "\t", quote = "", comment.char = "", stringsAsFactors = FALSE)[[1]]
  expect_equal(setdiff(getNamespaceExports("ggmlR"), aliases), character(0))
})
