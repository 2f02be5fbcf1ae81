# Misuse, odd orderings, degenerate shapes and stress: none of it may crash
# or hang the session, corrupt what was computed, or silently give a wrong
# value. Each block below is a regression test for a problem that once did.

test_that("empty shapes compute to empty (or zero) results instead of dividing by zero", {
  ctx <- ggml_init(16 * 1024^2)
  on.exit(ggml_free(ctx))
  z <- function(...) ggml_new_tensor(ctx, GGML_TYPE_F32, ne = c(...))

  # repeat_back to a shape with a zero dimension (was SIGFPE: a / 0 tiles)
  r <- ggml_repeat_back(ctx, z(0, 3), z(0, 3))
  expect_identical(compute(ctx, r), numeric(0))
  expect_identical(compute(ctx, ggml_repeat_back(ctx, z(2, 0), z(2, 0))), numeric(0))

  # flash_attn_back of an empty batch (was SIGFPE: keys split over 0 heads)
  fab <- ggml_flash_attn_back(ctx, z(4, 3, 2, 0), z(4, 5, 2, 0), z(4, 5, 2, 0), NULL, z(4, 2, 3, 0), 0.5)
  expect_identical(compute(ctx, fab), numeric(0))
  expect_identical(compute(ctx, ggml_flash_attn_ext(ctx, z(4, 3, 2, 0), z(4, 5, 2, 0), z(4, 5, 2, 0), NULL, 0.5)), numeric(0))

  # mul_mat with no rows in a, or no planes in b
  expect_identical(ggml_tensor_shape(ggml_mul_mat(ctx, z(4, 0), z(4, 3))), c(0, 3, 1, 1))
  expect_identical(compute(ctx, ggml_mul_mat(ctx, z(4, 0), z(4, 3))), numeric(0))
  expect_identical(compute(ctx, ggml_mul_mat(ctx, z(4, 3, 1), z(4, 2, 0))), numeric(0))
  # ... and an empty reduction is a sum of nothing
  expect_identical(compute(ctx, ggml_mul_mat(ctx, z(0, 3), z(0, 2))), numeric(6))

  # attention with no keys: every row fully masked -> zeros, gradients zero too
  set.seed(11)
  q <- tensor_of(ctx, array(rnorm(24), c(4, 3, 2, 1)))
  expect_identical(compute(ctx, ggml_flash_attn_ext(ctx, q, z(4, 0, 2, 1), z(4, 0, 2, 1), NULL, 0.5)), numeric(24))
  d <- tensor_of(ctx, array(rnorm(24), c(4, 2, 3, 1)))
  expect_identical(compute(ctx, ggml_flash_attn_back(ctx, q, z(4, 0, 2, 1), z(4, 0, 2, 1), NULL, d, 0.5)), numeric(24))
})

test_that("a graph of a very long chain of ops is built without overflowing the C stack", {
  # The graph builder walked sources recursively: ~200k nested calls took the
  # session down ("segfault from C stack overflow").
  n <- 250000L
  ctx <- ggml_init(n * (ggml_tensor_overhead() + 16) + ggml_graph_overhead_custom(n + 10, FALSE) + 1024)
  on.exit(ggml_free(ctx))
  a <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1)
  ggml_set_f32(a, 1.5)
  x <- a
  for (i in seq_len(n)) x <- ggml_scale(ctx, x, 1)
  g <- ggml_build_forward_expand(ctx, x, graph_size = n + 10)
  expect_equal(ggml_graph_n_nodes(g), n)
  ggml_graph_compute_with_ctx(ctx, g, 1L)
  expect_equal(ggml_get_f32(x), 1.5)
  # sources still come before their users, in the recursive order
  expect_equal(ggml_get_name(ggml_graph_node(g, -1)), ggml_get_name(x))
  expect_equal(ggml_tensor_op(ggml_graph_node(g, 0)), ggml_tensor_op(x))
})

test_that("long chains of contexts depending on each other stay fast and free cleanly", {
  # The cycle check walked every context reachable from the new dependency,
  # recursively: quadratic time (40k contexts took ~30 s), then a stack
  # overflow; freeing the chain recursed as deeply.
  n <- 40000L
  t0 <- proc.time()[["elapsed"]]
  prev <- ggml_init(512)
  x <- ggml_new_tensor_1d(prev, GGML_TYPE_F32, 1)
  ggml_set_f32(x, 2)
  first <- x
  for (i in seq_len(n)) {  # each step's context uses the previous one's tensor
    ctx <- ggml_init(512)
    x <- ggml_scale(ctx, x, 1)
    ggml_free(prev)
    prev <- ctx
  }
  # the whole chain is kept alive by the last context: computing still works
  g <- ggml_build_forward_expand(ggml_init(ggml_graph_overhead_custom(n + 10, FALSE) + 1024), x, graph_size = n + 10)
  ggml_graph_compute_with_ctx(prev, g, 1L)
  expect_equal(ggml_get_f32(x), 2)
  ggml_free(prev)
  rm(x, g, prev, ctx, first)
  invisible(gc())

  # the other way round: older contexts using the tensors of newer ones
  m <- 20000L
  ctxs <- lapply(seq_len(m), function(i) ggml_init(1024))
  ts <- lapply(ctxs, function(c) ggml_set_f32(ggml_new_tensor_1d(c, GGML_TYPE_F32, 1), 1))
  y <- ts[[m]]
  for (i in (m - 1L):1L) y <- ggml_add(ctxs[[i]], ts[[i]], y)
  expect_error(ggml_add(ctxs[[m]], ts[[m]], ts[[1]]), "cannot point into each other")
  for (c in ctxs) ggml_free(c)
  rm(ctxs, ts, y)
  invisible(gc())
  expect_lt(proc.time()[["elapsed"]] - t0, 20)
})

test_that("dependencies between contexts: exactly the cycles are refused", {
  # A random sequence of ops across contexts, checked against a plain model
  # of which context points into which.
  set.seed(5)
  k <- 12L
  ctxs <- lapply(seq_len(k), function(i) ggml_init(256 * 1024))
  on.exit(for (c in ctxs) ggml_free(c))
  ts <- lapply(ctxs, function(c) ggml_set_f32(ggml_new_tensor_1d(c, GGML_TYPE_F32, 1), 1))
  adj <- matrix(FALSE, k, k)  # adj[i, j]: context i points into context j
  reach <- function(from, to) {
    seen <- from
    repeat {
      nxt <- unique(c(seen, which(colSums(adj[seen, , drop = FALSE]) > 0)))
      if (to %in% nxt) return(TRUE)
      if (length(nxt) == length(seen)) return(FALSE)
      seen <- nxt
    }
  }
  for (step in 1:300) {
    i <- sample(k, 1)
    j <- sample(k, 1)
    cycle <- i != j && !adj[i, j] && reach(j, i)
    res <- tryCatch(ggml_add(ctxs[[i]], ts[[i]], ts[[j]]), error = function(e) e)
    if (cycle) {
      expect_s3_class(res, "error")
      expect_match(conditionMessage(res), "cannot point into each other")
    } else {
      expect_s3_class(res, "ggml_tensor")
      if (i != j) adj[i, j] <- TRUE
    }
  }
  expect_gt(sum(adj), 20)
})

test_that("ggml_get_next_tensor refuses a tensor that lives in another context", {
  # A graph's nodes carry the graph's context as their owner; the walk used
  # the tensor's header as if it lived in that context: a wild pointer.
  A <- ggml_init(1024^2)
  G <- ggml_init(1024^2)
  on.exit({ ggml_free(A); ggml_free(G) })
  a <- ggml_new_tensor_1d(A, GGML_TYPE_F32, 4)
  y <- ggml_sqr(A, a)
  z <- ggml_sqr(A, y)
  g <- ggml_build_forward_expand(G, z)
  n0 <- ggml_graph_node(g, 0)  # y: lives in A
  expect_error(ggml_get_next_tensor(G, n0), "does not belong to this context")
  # in its own context the same handle walks on
  expect_equal(ggml_tensor_op(ggml_get_next_tensor(A, n0)), ggml_tensor_op(z))
  expect_error(ggml_get_next_tensor(G, a), "does not belong")
})

test_that("freeing a buffer detaches views of its tensors in other contexts too", {
  # Views made in another context kept pointing into the freed buffer's
  # memory (held back until both contexts were gone): stale data, and every
  # free/alloc cycle kept one more buffer alive.
  be <- ggml_backend_cpu_init()
  C <- ggml_init(1024^2, no_alloc = TRUE)
  D <- ggml_init(1024^2)
  E <- ggml_init(1024^2)
  on.exit({ ggml_free(C); ggml_free(D); ggml_free(E); ggml_backend_free(be) })
  x <- ggml_new_tensor_1d(C, GGML_TYPE_F32, 4)
  buf <- ggml_backend_alloc_ctx_tensors(C, be)
  ggml_backend_tensor_set_data(x, c(1, 2, 3, 4))
  v <- ggml_view_1d(D, x, 2, 8)
  w <- ggml_view_1d(E, v, 1, 4)  # a view of the view, one context further
  s <- ggml_scale(D, x, 10)
  expect_equal(ggml_get_f32(v), c(3, 4))
  expect_equal(ggml_get_f32(w), 4)
  ggml_backend_buffer_free(buf)
  expect_error(ggml_get_f32(x), "has no data")
  expect_error(ggml_get_f32(v), "has no data")
  expect_error(ggml_get_f32(w), "has no data")
  expect_error(ggml_graph_compute(D, ggml_build_forward_expand(D, s)), "no data")
  # reallocated: the context's own tensors get memory again, the detached views stay detached
  buf2 <- ggml_backend_alloc_ctx_tensors(C, be)
  ggml_backend_tensor_set_data(x, c(5, 6, 7, 8))
  expect_equal(ggml_backend_tensor_get_data(x), c(5, 6, 7, 8))
  expect_error(ggml_get_f32(v), "has no data")
  v2 <- ggml_view_1d(D, x, 2, 8)
  expect_equal(ggml_get_f32(v2), c(7, 8))
  for (i in 1:50) {  # free/alloc cycles while another context views the buffer
    ggml_backend_buffer_free(buf2)
    buf2 <- ggml_backend_alloc_ctx_tensors(C, be)
  }
  ggml_backend_tensor_set_data(x, 1:4)
  expect_equal(ggml_backend_tensor_get_data(x), 1:4)
})

test_that("I32 elements are read and written exactly, and refuse what int32 cannot hold", {
  # ggml_set_f32 / ggml_get_f32 went through float: 16777217 became 16777216,
  # 2147483647 read back as 2147483648, 1.5 was silently truncated, 3e9 clipped.
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx))
  t <- ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 3, 2)
  x <- c(16777217, 2147483647, -2147483648, 123456789, -1, 0)
  ggml_set_f32(t, x)
  expect_identical(ggml_get_f32(t), x)
  expect_identical(ggml_backend_tensor_get_data(t), x)
  expect_identical(ggml_get_f32_1d(t, 3), 123456789)
  expect_identical(ggml_get_f32_nd(t, 1, 0, 0, 0), 2147483647)
  ggml_set_f32_1d(t, 5, 16777219)
  ggml_set_f32_nd(t, 0, 1, 0, 0, -16777219)
  expect_identical(ggml_get_f32(t)[4:6], c(-16777219, -1, 16777219))
  before <- ggml_get_f32(t)
  expect_error(ggml_set_f32(t, c(1, 2, 1.5, 4, 5, 6)), "element 3 of 'values' \\(1.5\\) is not a 32-bit integer")
  expect_error(ggml_set_f32(t, 3e9), "not a 32-bit integer")
  expect_error(ggml_set_f32(t, NA_real_), "not a 32-bit integer")
  expect_error(ggml_set_f32_1d(t, 0, 0.5), "not a 32-bit integer")
  expect_error(ggml_set_f32_nd(t, 0, 0, 0, 0, -2^31 - 1), "not a 32-bit integer")
  expect_identical(ggml_get_f32(t), before)  # nothing half written
  # a transposed view reads and writes through its strides
  tt <- ggml_transpose(ctx, t)
  expect_identical(ggml_get_f32(tt), as.numeric(t(matrix(before, 3, 2))))
  ggml_set_f32(tt, 1:6)
  expect_identical(ggml_get_f32(t), as.numeric(t(matrix(1:6, 2, 3))))
  expect_error(ggml_get_f32_1d(t, 6), "out of range")
  expect_error(ggml_set_f32_nd(t, 0, 2, 0, 0, 1), "out of range")
})

test_that("F16 values are the binary16 nearest to the double, not to the double rounded to float", {
  # 1 + 2^-11 + 2^-30 lies above the tie between 1 and 1 + 2^-10; rounded to
  # float first it became the tie itself, which went (to even) down to 1.
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx))
  x <- c(1 + 2^-11 + 2^-30, 1 + 2^-11 - 2^-30, -(1 + 2^-11 + 2^-30), 2^-25 + 2^-40, 2^-25, 65520 - 2^-20, 1 + 3 * 2^-11)
  want <- c(1 + 2^-10, 1, -(1 + 2^-10), 2^-24, 0, 65504, 1 + 2^-9)
  t <- ggml_new_tensor_1d(ctx, GGML_TYPE_F16, length(x))
  ggml_set_f32(t, x)
  expect_identical(ggml_get_f32(t), want)
  ggml_set_f32(t, 0)
  ggml_backend_tensor_set_data(t, x)
  expect_identical(ggml_backend_tensor_get_data(t), want)
  for (i in seq_along(x)) ggml_set_f32_1d(t, i - 1, -x[i])
  expect_identical(ggml_get_f32(t), -want)
  expect_identical(ggml_fp16_to_fp32(ggml_fp32_to_fp16(x)), want)
  # specials and subnormals
  s <- c(-Inf, Inf, NaN, -0, 2^-24, 65504)
  ggml_set_f32(ggml_view_1d(ctx, t, 6, 0), s)
  y <- ggml_get_f32(t)[1:6]
  expect_identical(y[c(1, 2, 5, 6)], s[c(1, 2, 5, 6)])
  expect_true(is.nan(y[3]))
  expect_identical(1 / y[4], -Inf)
})

test_that("ggml_new_f32 in a no_alloc context is an error, not a value silently dropped", {
  ctx <- ggml_init(1024^2, no_alloc = TRUE)
  on.exit(ggml_free(ctx))
  expect_error(ggml_new_f32(ctx, 3), "no_alloc")
  ggml_set_no_alloc(ctx, FALSE)
  expect_equal(ggml_get_f32(ggml_new_f32(ctx, 3)), 3)
})

test_that("long names are cut at a character boundary and read back as UTF-8", {
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx))
  a <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 1)
  long <- strrep("\u00e9", 40)  # 80 bytes; the library keeps at most 63
  ggml_set_name(a, long)
  n <- ggml_get_name(a)
  expect_true(validUTF8(n))
  expect_identical(n, strrep("\u00e9", 31))
  expect_identical(Encoding(n), "UTF-8")
  expect_equal(ggml_get_name(ggml_get_tensor(ctx, n)), n)
  ggml_set_name(a, strrep("x", 100))
  expect_identical(ggml_get_name(a), strrep("x", 63))
})

test_that("reading a tensor without memory fails before allocating room for it", {
  ctx <- ggml_init(1024^2, no_alloc = TRUE)
  on.exit(ggml_free(ctx))
  big <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2^40)  # 4 TiB, never allocated
  expect_error(ggml_backend_tensor_get_data(big), "has no memory")
  expect_error(ggml_backend_tensor_get_data(big, 0, 2^40), "has no memory")
  expect_error(ggml_backend_tensor_set_data(big, 1:3), "has no memory")
  # a failed allocation leaves the context usable
  be <- ggml_backend_cpu_init()
  on.exit(ggml_backend_free(be), add = TRUE)
  expect_error(ggml_backend_alloc_ctx_tensors(ctx, be), "cannot allocate")
  expect_error(ggml_init(1e15), "cannot allocate|too large")
  expect_error(ggml_init(2^62), "too large")
  expect_s3_class(ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 4), "ggml_tensor")
})

# ---- every exported function, every argument, the wrong kind of value ----

test_that("every argument refuses values of the wrong kind with an R error", {
  ctx <- ggml_init(8 * 1024^2)
  be <- ggml_backend_cpu_init()
  bctx <- ggml_init(1024^2, no_alloc = TRUE)
  on.exit({ ggml_free(ctx); ggml_free(bctx); ggml_free(freed_buf_ctx); ggml_backend_free(be) })
  ten <- ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 4, 3)
  ggml_set_f32(ten, 1)
  gra <- ggml_build_forward_expand(ctx, ggml_sqr(ctx, ten))
  ggml_new_tensor_1d(bctx, GGML_TYPE_F32, 3)
  buf <- ggml_backend_alloc_ctx_tensors(bctx, be)
  dead <- ggml_init(1024^2, no_alloc = TRUE)
  dead_t <- ggml_new_tensor_1d(dead, GGML_TYPE_F32, 4)
  dead_g <- ggml_new_graph(dead)
  dead_buf <- ggml_backend_alloc_ctx_tensors(dead, be)
  ggml_free(dead)
  dead_be <- ggml_backend_cpu_init()
  ggml_backend_free(dead_be)
  freed_buf_ctx <- ggml_init(1024^2, no_alloc = TRUE)
  ggml_new_tensor_1d(freed_buf_ctx, GGML_TYPE_F32, 4)
  freed_buf <- ggml_backend_alloc_ctx_tensors(freed_buf_ctx, be)
  ggml_backend_buffer_free(freed_buf)
  restored <- unserialize(serialize(list(ctx, ten, gra, be, buf), NULL))

  handles <- list(ctx = ctx, tensor = ten, graph = gra, backend = be, buffer = buf)
  junk <- list(null = NULL, chr = "a", lst = list(1), env = new.env(), fun = identity, raw = as.raw(1),
               cplx = 1i, lgl = NA, ptr = new("externalptr"), dead = dead, dead_t = dead_t, dead_g = dead_g,
               dead_buf = dead_buf, dead_be = dead_be, freed_buf = freed_buf)
  kind_of_arg <- function(a) {
    if (a %in% c("ctx")) return("ctx")
    if (a %in% c("a", "b", "tensor", "q", "k", "v", "d", "src")) return("tensor")
    if (a %in% c("graph", "backend", "buffer")) return(a)
    NA_character_
  }
  fns <- getNamespaceExports("ggmlR")
  n_checked <- 0
  accepted <- character(0)
  for (fn in sort(fns)) {
    f <- get(fn, asNamespace("ggmlR"))
    if (!is.function(f)) next
    for (arg in names(formals(f))) {
      kind <- kind_of_arg(arg)
      if (is.na(kind)) next
      bad <- c(junk, handles[names(handles) != kind], list(restored = restored[[match(kind, names(handles))]]))
      for (bn in names(bad)) {
        # the other arguments: valid values, so only `arg` is wrong
        args <- lapply(names(formals(f)), function(a) {
          k <- kind_of_arg(a)
          if (!is.na(k)) return(handles[[k]])
          if (a == "mask" || a == "n_elements") return(NULL)
          if (a %in% c("type", "n_dims")) return(if (a == "type") 0L else 2L)
          if (a %in% c("name")) return("n")
          if (a %in% c("no_alloc", "grads")) return(FALSE)
          if (a %in% c("ne", "values", "data", "x")) return(c(1, 2))
          1
        })
        names(args) <- names(formals(f))
        args[arg] <- list(bad[[bn]])
        # freeing twice is harmless
        if ((fn == "ggml_free" && bn == "dead") || (fn == "ggml_backend_free" && bn == "dead_be") ||
            (fn == "ggml_backend_buffer_free" && bn %in% c("dead_buf", "freed_buf"))) next
        if (fn == "ggml_backend_free" && bn == "restored") next
        if (fn == "ggml_backend_buffer_free" && bn == "restored") next
        if (fn == "ggml_free" && bn == "restored") next
        res <- tryCatch(do.call(f, args), error = function(e) e)
        if (!inherits(res, "error")) accepted <- c(accepted, paste(fn, arg, bn))
        n_checked <- n_checked + 1
      }
    }
  }
  expect_identical(accepted, character(0))  # each of these should have been an error
  expect_gt(n_checked, 1000)
  # after all that, everything still works
  ggml_graph_compute(ctx, gra)
  expect_equal(ggml_get_f32(ggml_graph_node(gra, -1)), rep(1, 12))
})

# ---- the garbage collector ----

test_that("thousands of contexts, cross-context ops and buffers, dropped or freed in any order", {
  set.seed(9)
  be <- ggml_backend_cpu_init()
  on.exit(ggml_backend_free(be))
  keep <- list()
  for (i in 1:1500) {
    ctx <- ggml_init(64 * 1024, no_alloc = i %% 3 == 0)
    a <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 8)
    if (i %% 3 == 0) buf <- ggml_backend_alloc_ctx_tensors(ctx, be)
    ggml_set_f32(a, i)
    if (length(keep) > 0 && i %% 5 == 0) {
      other <- keep[[sample(length(keep), 1)]]
      other_val <- tryCatch(ggml_get_f32(other), error = function(e) NULL)  # freed, or its buffer freed
      if (!is.null(other_val)) {
        work <- ggml_init(64 * 1024)
        s <- ggml_add(work, a, ggml_view_1d(work, other, 8, 0))
        g <- ggml_build_forward_expand(work, s, graph_size = 16)
        ggml_graph_compute_with_ctx(work, g, 1L)
        expect_equal(ggml_get_f32(s), i + other_val)
        if (i %% 2 == 0) ggml_free(work)
      }
    }
    if (i %% 7 == 0) keep[[length(keep) + 1]] <- a
    if (length(keep) > 20) keep[[sample(length(keep), 1)]] <- NULL
    if (i %% 4 == 0) ggml_free(ctx)
    if (i %% 6 == 0 && exists("buf")) ggml_backend_buffer_free(buf)
    if (i %% 250 == 0) gc()
  }
  vals <- vapply(keep, function(t) tryCatch(ggml_get_f32(t)[1], error = function(e) NA_real_), 1)
  expect_true(all(is.na(vals) | (vals == round(vals) & vals >= 1)))
  rm(keep, ctx, a)
  for (i in 1:3) gc()
})

test_that("handles survive gctorture", {
  gctorture(TRUE)
  on.exit(gctorture(FALSE))
  ctx <- ggml_init(1024^2)
  a <- ggml_new_tensor_2d(ctx, GGML_TYPE_F16, 3, 2)
  ggml_set_f32(a, c(1, -Inf, NaN, 0.5, 2, 3))
  i <- ggml_new_tensor_2d(ctx, GGML_TYPE_I32, 3, 2)
  x <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 2)
  ggml_set_param(x)
  l <- ggml_sum(ctx, ggml_sqr(ctx, x))
  ggml_set_loss(l)
  g <- ggml_build_forward_expand_grads(ctx, l, 32)
  ggml_build_backward_expand(ctx, g)
  ggml_set_f32(x, c(3, 4))
  ggml_graph_reset(g)
  ggml_graph_compute_with_ctx(ctx, g, 1L)
  gr <- ggml_get_f32(ggml_graph_get_grad(g, x))
  v <- ggml_get_f32(a)
  e <- tryCatch(ggml_add(ctx, i, x), error = conditionMessage)
  ggml_free(ctx)
  gctorture(FALSE)
  expect_equal(gr, c(6, 8))
  expect_identical(v[c(1, 2, 4)], c(1, -Inf, 0.5))
  expect_match(e, "must be F32, F16 or BF16")
})

# ---- training handles: optimization contexts, datasets, results, schedulers, GGUF ----

# Random sequences of calls (frees, uses after free, wrong kinds, NA, NULL,
# negative and huge sizes, garbage collection in between) over the new
# handles, run in a child R process: a crash would kill it, not the tests.
test_that("random call sequences over training and GGUF handles never kill the R process", {
  script <- tempfile(fileext = ".R")
  on.exit(unlink(script))
  writeLines(c(
    "library(ggmlR)",
    "set.seed(as.integer(commandArgs(TRUE)[1]))",
    "path <- tempfile(fileext = '.gguf')",
    "bad <- list(NULL, NA, NA_real_, -1, 2^60, 1e300, 'x', list(), function() 1, TRUE, 1.5, integer(0))",
    "H <- new.env()",
    "fresh <- function() {",
    "  H$pctx <- ggml_init(1024^2)",
    "  H$w <- ggml_set_param(ggml_new_tensor_from_array(H$pctx, matrix(0, 2, 1)))",
    "  H$x <- ggml_new_tensor_2d(H$pctx, GGML_TYPE_F32, 2, 4)",
    "  H$ctx <- ggml_init(1024^2, no_alloc = TRUE)",
    "  H$y <- ggml_mul_mat(H$ctx, H$w, H$x)",
    "  H$be <- ggml_backend_cpu_init()",
    "  H$sched <- ggml_backend_sched_new(H$be)",
    "  H$ds <- ggml_opt_dataset_from_arrays(matrix(runif(32), 2), matrix(runif(16), 1))",
    "  H$res <- ggml_opt_result_init()",
    "  p <- ggml_opt_default_params(H$sched, GGML_OPT_LOSS_TYPE_MEAN_SQUARED_ERROR)",
    "  p$ctx_compute <- H$ctx; p$inputs <- H$x; p$outputs <- H$y",
    "  H$oc <- ggml_opt_init(p)",
    "  H$g <- gguf_init_empty()",
    "}",
    "pick <- function() { h <- as.list(H); if (runif(1) < 0.3) sample(bad, 1)[[1]] else sample(h, 1)[[1]] }",
    "ops <- list(",
    "  function() ggml_opt_free(pick()), function() ggml_opt_dataset_free(pick()), function() ggml_opt_result_free(pick()),",
    "  function() ggml_backend_sched_free(pick()), function() ggml_backend_free(pick()), function() ggml_free(pick()),",
    "  function() gguf_free(pick()), function() ggml_backend_sched_reset(pick()),",
    "  function() ggml_opt_epoch(pick(), pick(), pick(), pick()), function() ggml_opt_eval(pick(), pick()),",
    "  function() ggml_opt_alloc(pick(), runif(1) < 0.5), function() ggml_opt_reset(pick(), TRUE),",
    "  function() ggml_opt_dataset_shuffle(pick(), pick(), pick()), function() ggml_opt_dataset_get_batch(pick(), pick(), pick(), pick()),",
    "  function() ggml_get_array(ggml_opt_dataset_data(pick())), function() ggml_set_array(ggml_opt_dataset_labels(pick()), pick()),",
    "  function() ggml_opt_result_loss(pick()), function() ggml_opt_result_pred(pick()), function() ggml_get_array(ggml_opt_loss(pick())),",
    "  function() ggml_opt_grad_acc(pick(), pick()), function() ggml_opt_dataset_init(pick(), pick(), pick(), pick(), pick(), pick()),",
    "  function() gguf_set_val_u32(pick(), 'k', pick()), function() gguf_set_arr_data(pick(), 'a', pick(), pick()),",
    "  function() gguf_add_tensor(pick(), pick()), function() gguf_write_to_file(pick(), path),",
    "  function() gguf_get_val(pick(), pick()), function() gguf_get_tensor_ne(pick(), pick()),",
    "  function() gguf_init_from_file(path), function() ggml_add(pick(), pick(), pick()),",
    "  function() ggml_opt_fit(pick(), pick(), pick(), pick(), pick(), 3, nepoch = 1, silent = TRUE),",
    "  function() invisible(gc()), function() fresh())",
    "fresh()",
    "for (i in seq_len(400)) { f <- sample(ops, 1)[[1]]; try(suppressWarnings(f()), silent = TRUE) }",
    "rm(list = ls(H), envir = H); invisible(gc())",
    "cat('survived\\n')"), script)
  rscript <- file.path(R.home("bin"), "Rscript")
  libs <- paste(.libPaths(), collapse = .Platform$path.sep)
  for (seed in 1:4) {
    out <- suppressWarnings(system2(rscript, c("--vanilla", script, seed), stdout = TRUE, stderr = TRUE,
                                    env = paste0("R_LIBS=", libs)))
    expect_true("survived" %in% out, info = paste(c(paste("seed", seed), utils::tail(out, 5)), collapse = "\n"))
  }
})

test_that("a corrupted or truncated GGUF file is an R error, never a crash", {
  path <- tempfile(fileext = ".gguf")
  on.exit(unlink(path))
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx), add = TRUE)
  g <- gguf_init_empty()
  gguf_set_val_str(g, "general.architecture", "test")
  gguf_set_arr_str(g, "names", c("a", "b"))
  gguf_add_tensor(g, ggml_set_name(ggml_new_tensor_from_array(ctx, matrix(rnorm(64), 8)), "w"))
  gguf_write_to_file(g, path)
  gguf_free(g)
  good <- readBin(path, "raw", file.info(path)$size)
  set.seed(5)
  for (cut in unique(c(0, 1, 4, 8, 23, sample(length(good) - 1, 20)))) {
    writeBin(good[seq_len(cut)], path)
    expect_error(gguf_init_from_file(path), info = paste("truncated at", cut))
  }
  for (k in 1:40) {  # flipped bytes in the header and metadata: an error or a valid read
    b <- good
    at <- sample(min(length(b), 200), 1)
    b[at] <- as.raw(sample(0:255, 1))
    writeBin(b, path)
    r <- tryCatch(gguf_init_from_file(path), error = function(e) NULL)
    if (!is.null(r)) { gguf_free(r$gguf); ggml_free(r$ctx) }
  }
  expect_true(TRUE)
})
