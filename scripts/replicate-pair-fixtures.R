# Reference figures for column comparisons under replicate weights when a column of the
# group is empty under some replicate, made by R's survey package. The SE of p_A - p_B is the
# replicate variance of that difference alone: a replicate is dropped (R's na.action in
# svrVar) when p_A or p_B is NaN under it, not when a third column of the group is. R gives
# that figure for a pair when the pair is asked alone (svyby over the two columns, or
# svyratio of the two columns' ratios); svyby or svyratio over the whole group with
# covmat = TRUE drops, for every pair, each replicate under which any column of the group is
# empty. Both are written (`se` and `groupSE`) so that the test shows the case tells them apart.
#
# Data: test/fixtures/r/nhanes-replicates.csv.gz (make-design-reference.R), its bootstrap
# replicates (mse = FALSE) and JKn replicates with mse = TRUE, settings from
# design.reference.json. Base SDMVSTRA = 89 AND RIAGENDR = 1, row HI_CHOL = 1 (a blank is
# not 1); columns: race's values (disjoint; race 4 is empty under some replicates), and the
# overlapping expressions race = 1,2 / race = 2,3 / race = 4.
#
# Run from the repository root:  Rscript scripts/replicate-pair-fixtures.R
# Writes test/fixtures/r/replicate-pairs.reference.json.
suppressMessages({ library(survey); library(jsonlite) })
data <- read.csv(gzfile("test/fixtures/r/nhanes-replicates.csv.gz"))
reference <- fromJSON("test/fixtures/r/design.reference.json", simplifyVector = FALSE)
settingsOf <- function(type) {
  for (t in reference$tables) if (identical(t$build$replicateType, type) && is.null(t$build$givenDegf)) return(t$build)
  stop(type)
}
base <- data$SDMVSTRA == 89 & data$RIAGENDR == 1
y <- as.numeric(!is.na(data$HI_CHOL) & data$HI_CHOL == 1)
disjoint <- lapply(1:4, function(v) !is.na(data$race) & data$race == v)
overlapping <- list(!is.na(data$race) & data$race %in% c(1, 2), !is.na(data$race) & data$race %in% c(2, 3), !is.na(data$race) & data$race == 4)

figures <- function(type, mse) {
  s <- settingsOf(type)
  columns <- unlist(s$replicateWeights)
  design <- svrepdesign(data = data, weights = ~WTMEC2YR, repweights = data[, columns], combined.weights = TRUE, type = type,
                        scale = s$scale, rscales = unlist(s$rscales), mse = mse)
  dom <- subset(design, base)
  inDom <- base
  on <- function(x) x[inDom]
  replicateWeights <- weights(dom, "analysis")
  emptyUnder <- function(col) which(colSums(replicateWeights * on(col)) == 0)
  # Every ratio n_a / d_a (n = row AND column, d = column) of the given columns, with covmat.
  ratiosOf <- function(cols) {
    sub <- dom
    for (a in seq_along(cols)) {
      sub$variables[[paste0(".d", a)]] <- as.numeric(on(cols[[a]]))
      sub$variables[[paste0(".n", a)]] <- as.numeric(on(cols[[a]] & y == 1))
    }
    r <- svyratio(as.formula(paste("~", paste0(".n", seq_along(cols), collapse = "+"))),
                  as.formula(paste("~", paste0(".d", seq_along(cols), collapse = "+"))), sub, covmat = TRUE)
    list(ratios = r, own = paste0(".n", seq_along(cols), "/.d", seq_along(cols)))
  }
  difference <- function(r, a, b) {
    contrast <- setNames(rep(0, length(coef(r$ratios))), names(coef(r$ratios)))
    contrast[r$own[a]] <- 1; contrast[r$own[b]] <- -1
    svycontrast(r$ratios, contrast)
  }
  cells <- function(cols) lapply(seq_along(cols), function(a) {
    m <- svymean(~.y, subset(update(dom, .y = on(y)), on(cols[[a]])))
    list(column = a - 1, proportion = unname(coef(m)), se = unname(SE(m)[1]), emptyReplicates = I(emptyUnder(cols[[a]])))
  })
  # Disjoint columns as the product's docs write it: svycontrast(svyby(~y, ~col, ., svymean, covmat = TRUE), c(1, -1)).
  group <- rep(NA_integer_, nrow(data))
  for (a in seq_along(disjoint)) group[disjoint[[a]]] <- a
  byOf <- function(levels) {
    sub <- subset(update(dom, .y = on(y), .col = factor(on(group))), on(group) %in% levels)
    svyby(~.y, ~.col, update(sub, .col = factor(as.character(.col))), svymean, covmat = TRUE)
  }
  whole <- byOf(seq_along(disjoint))
  disjointPairs <- list()
  for (a in 1:3) for (b in (a + 1):4) {
    pair <- svycontrast(byOf(c(a, b)), c(1, -1))
    contrast <- rep(0, 4); contrast[a] <- 1; contrast[b] <- -1
    disjointPairs[[length(disjointPairs) + 1]] <- list(columnA = a - 1, columnB = b - 1, difference = unname(coef(pair)), se = unname(SE(pair)[1]),
                                                       groupSE = unname(SE(svycontrast(whole, contrast))[1]))
  }
  allRatios <- ratiosOf(overlapping)
  overlapPairs <- list()
  for (a in 1:2) for (b in (a + 1):3) {
    pair <- difference(ratiosOf(overlapping[c(a, b)]), 1, 2)
    overlapPairs[[length(overlapPairs) + 1]] <- list(columnA = a - 1, columnB = b - 1, difference = unname(coef(pair)), se = unname(SE(pair)[1]),
                                                     groupSE = unname(SE(difference(allRatios, a, b))[1]))
  }
  list(type = type, mse = mse, disjoint = list(cells = cells(disjoint), pairs = disjointPairs), overlapping = list(cells = cells(overlapping), pairs = overlapPairs))
}

fixture <- list(
  base = "SDMVSTRA=89 AND RIAGENDR=1", row = "HI_CHOL=1", disjointColumns = "race", overlappingColumns = c("race=1,2", "race=2,3", "race=4"),
  r = list(version = paste(R.version$major, R.version$minor, sep = "."), survey = as.character(packageVersion("survey"))),
  designs = suppressWarnings(list(figures("bootstrap", FALSE), figures("JKn", TRUE)))
)
writeLines(toJSON(fixture, auto_unbox = TRUE, digits = NA, pretty = TRUE), "test/fixtures/r/replicate-pairs.reference.json")
