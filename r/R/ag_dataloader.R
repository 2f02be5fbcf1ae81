# Mini-batch iteration over column-major data ([features, samples]) for the
# autograd engine. Only complete batches are produced; the order is drawn
# again (with R's RNG) on every reset when shuffle is TRUE.

ag_dataloader <- function(x, y = NULL, batch_size = 32L, shuffle = TRUE,
                          col_major = TRUE) {
  if (!is.matrix(x) || !is.numeric(x)) stop("x must be a numeric matrix", call. = FALSE)
  if (!is.null(y) && (!is.matrix(y) || !is.numeric(y)))
    stop("y must be a numeric matrix or NULL", call. = FALSE)
  batch_size <- .ag_check_count(batch_size, "batch_size")
  if (!col_major) {
    x <- t(x)
    if (!is.null(y)) y <- t(y)
  }
  if (!is.null(y) && ncol(y) != ncol(x))
    stop("x and y must have the same number of samples (columns in col-major)", call. = FALSE)

  loader <- new.env(parent = emptyenv())
  loader$x <- x
  loader$y <- y
  loader$n <- ncol(x)
  loader$batch_size <- batch_size
  loader$shuffle <- isTRUE(shuffle)
  loader$order <- seq_len(loader$n)
  loader$pos <- 1L

  loader$reset <- function() {
    if (loader$shuffle) loader$order <- sample(loader$n)
    loader$pos <- 1L
    invisible(loader)
  }
  loader$has_next <- function() loader$pos + loader$batch_size - 1L <= loader$n
  loader$next_batch <- function() {
    if (!loader$has_next()) stop("No more batches. Call $reset() to start a new epoch.", call. = FALSE)
    idx <- loader$order[loader$pos:(loader$pos + loader$batch_size - 1L)]
    loader$pos <- loader$pos + loader$batch_size
    batch <- list(x = ag_tensor(loader$x[, idx, drop = FALSE]))
    if (!is.null(loader$y)) batch$y <- ag_tensor(loader$y[, idx, drop = FALSE])
    batch
  }
  loader$epoch <- function() {
    loader$reset()
    batches <- list()
    while (loader$has_next()) batches[[length(batches) + 1L]] <- loader$next_batch()
    batches
  }
  loader$n_batches <- function() loader$n %/% loader$batch_size

  class(loader) <- "ag_dataloader"
  loader$reset()
}

print.ag_dataloader <- function(x, ...) {
  cat(sprintf("ag_dataloader | n=%d | batch_size=%d | n_batches=%d | shuffle=%s\n",
              x$n, x$batch_size, x$n_batches(), x$shuffle))
  invisible(x)
}
