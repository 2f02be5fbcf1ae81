# CRAN ggmlR's seed facade: every random choice of the package (weight
# initialisation, dropout masks, shuffling) is drawn from R's generator, so
# seeding it makes a run reproducible.
ggml_set_seed <- function(seed) {
  if (is.null(seed)) return(invisible(NULL))
  if (!is.numeric(seed) || length(seed) != 1 || is.na(seed) || seed != floor(seed) || abs(seed) > .Machine$integer.max) {
    stop("'seed' must be a single whole number (not NA), or NULL", call. = FALSE)
  }
  set.seed(as.integer(seed))
  invisible(as.integer(seed))
}
