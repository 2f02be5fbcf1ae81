# The R API keeps up with the C library: every tensor constructor declared in
# include/ggml.h is exported with a help page, or listed below with the reason
# it is not bound. A new C op without a binding fails here.

not_bound <- c(
  ggml_rope_ext      = "13 scalar arguments: binding pending (docs/r-api.md)",
  ggml_rope_ext_back = "13 scalar arguments: binding pending (docs/r-api.md)"
)

header_ops <- function() {
  hdr <- test_path("..", "..", "..", "include", "ggml.h")
  if (!file.exists(hdr)) return(NULL)
  decl <- grep("^GGML_API struct ggml_tensor \\* ggml_[a-z0-9_]+\\(", readLines(hdr), value = TRUE)
  sub("\\(.*$", "", sub("^GGML_API struct ggml_tensor \\* ", "", decl))
}

test_that("every op constructor of include/ggml.h has an R export or a stated reason", {
  ops <- header_ops()
  skip_if(is.null(ops), "include/ggml.h is not beside the package (checking a tarball)")
  expect_gt(length(ops), 40)  # the parse found the constructors
  exports <- getNamespaceExports("ggmlR")
  expect_equal(setdiff(ops, c(exports, names(not_bound))), character(0))
  # the list stays true: no entry for an op that is bound or no longer declared
  expect_equal(intersect(names(not_bound), exports), character(0))
  expect_equal(setdiff(names(not_bound), ops), character(0))
})

test_that("every export has a help page", {
  index <- system.file("help", "AnIndex", package = "ggmlR")
  skip_if(index == "", "the installed package has no help index")
  aliases <- utils::read.table(index, sep = "\t", quote = "", comment.char = "", stringsAsFactors = FALSE)[[1]]
  expect_equal(setdiff(getNamespaceExports("ggmlR"), aliases), character(0))
})
