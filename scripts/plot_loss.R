# Draws the loss curve of a train_austen run: Rscript scripts/plot_loss.R out/loss.csv out/loss.png
# (redraws a picture by hand). train_austen writes the same script into its --out
# directory and runs it there (draw_plot in examples/gpt/train_austen.c): keep the two equal.
a <- commandArgs(TRUE); d <- read.csv(a[1])
png(a[2], width = 900, height = 560, type = 'cairo')
par(mar = c(4.5, 4.5, 3, 1))
v <- d[!is.na(d$val_loss), ]
yl <- range(c(d$train_loss, v$val_loss), finite = TRUE)
plot(d$step, d$train_loss, type = 'l', col = 'grey55', ylim = yl, xlab = 'step', ylab = 'loss (nats per character)',
     main = 'Character-level GPT on Jane Austen')
if (nrow(d) >= 25) lines(d$step, stats::filter(d$train_loss, rep(1/25, 25), sides = 1), col = 'black', lwd = 2)
lines(v$step, v$val_loss, type = 'o', col = 'firebrick', pch = 19, lwd = 2)
grid()
legend('topright', c('train (batch)', 'train (25-step mean)', 'validation'), col = c('grey55', 'black', 'firebrick'),
       lwd = c(1, 2, 2), pch = c(NA, NA, 19), bg = 'white')
invisible(dev.off())
