# ggml_graph_view: a graph of some of another graph's nodes (R/graph.R).

test_that("a view holds the chosen nodes and computes them alone", {
  ctx <- ggml_init(1024^2)
  on.exit(ggml_free(ctx))
  a <- ggml_new_tensor_1d(ctx, GGML_TYPE_F32, 3)
  ggml_set_f32(a, c(1, 2, 3))
  b <- ggml_add(ctx, a, a)     # node 0
  c <- ggml_mul(ctx, b, b)     # node 1
  ggml_set_name(c, "c")
  d <- ggml_neg(ctx, c)        # node 2
  g <- ggml_build_forward_expand(ctx, d)
  expect_identical(ggml_graph_n_nodes(g), 3L)
  ggml_graph_compute(ctx, g)
  head <- ggml_graph_view(g, 0, 2)
  expect_identical(ggml_graph_n_nodes(head), 2L)
  expect_identical(ggml_get_name(ggml_graph_node(head, 1)), "c")
  tail <- ggml_graph_view(g, 2, 3)
  ggml_set_f32(c, c(10, 20, 30))   # only the last node runs: d = -c
  ggml_graph_compute(ctx, tail)
  expect_identical(ggml_get_f32(d), c(-10, -20, -30))
  expect_identical(ggml_graph_n_nodes(ggml_graph_view(g, 1, 1)), 0L)
  expect_error(ggml_graph_view(g, 2, 1), "i0 <= i1")
  expect_error(ggml_graph_view(g, 0, 4), "i1 <= 3")
  expect_error(ggml_graph_view(g, -1, 2), "0 <= i0")
  expect_error(ggml_graph_view(a, 0, 1), "graph")
})
