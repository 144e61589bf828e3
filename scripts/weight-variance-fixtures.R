# Reference standard errors of tables weighted with a calibrated weight, made by R's survey
# package: the linearization of R's rake(), postStratify() and calibrate() designs, which
# uses the residuals of the calibration (not the plain Horvitz-Thompson variance with the
# final weights). Run from the repository root:  Rscript scripts/weight-variance-fixtures.R
# Writes test/fixtures/weight-variance/<case>.json: the targets (the engine's format), the
# method and options, the design (taylor: NHANES strata SDMVSTRA and PSUs SDMVPSU, nested;
# simple: ids = ~1), and per cell of rows x columns R's weighted total, SE(svytotal) of the
# cell, the column proportion and SE(svymean) of it in the column's domain; also the same
# SEs with the final weights as fixed weights (what the engine gave before), for contrast.
suppressMessages({ library(survey); library(jsonlite) })
options(survey.lonely.psu = "fail")

nhanes <- read.csv(gzfile("datasets/nhanes_2009_2010_survey.csv.gz"))
key <- function(x) ifelse(is.na(x), "NA", as.character(x))
as_factor <- function(x) factor(key(x), levels = unique(c(as.character(sort(unique(x[!is.na(x)]))), if (any(is.na(x))) "NA")))
props <- function(...) { p <- c(...); p / sum(p) }
margin <- function(variable, proportions) list(variable = variable, proportions = as.list(proportions))

frame <- data.frame(w = nhanes$WTMEC2YR, psu = nhanes$SDMVPSU, strata = nhanes$SDMVSTRA)
for (v in c("race", "agecat", "RIAGENDR", "HI_CHOL")) frame[[v]] <- as_factor(nhanes[[v]])
total <- sum(frame$w)

design_of <- function(kind, weights = "w") {
  f <- as.formula(paste("~", weights))
  if (kind == "taylor") svydesign(ids = ~psu, strata = ~strata, nest = TRUE, weights = f, data = frame)
  else svydesign(ids = ~1, weights = f, data = frame)
}

pop_margin <- function(m) {
  levels <- levels(frame[[m$variable]])
  df <- data.frame(factor(levels, levels = levels), Freq = as.vector(unlist(m$proportions)[levels]) * total)
  names(df)[1] <- m$variable
  df
}
pop_vector <- function(margins) {
  out <- c(`(Intercept)` = total)
  for (m in margins) {
    levels <- levels(frame[[m$variable]])
    p <- unlist(m$proportions)[levels]
    out <- c(out, setNames(as.vector(p[-1]) * total, paste0(m$variable, levels[-1])))
  }
  out
}

# Per cell of rows x columns: total and its SE, column proportion and its SE (column as a domain).
figures <- function(d, rows, columns) {
  out <- list()
  for (c in levels(frame[[columns]])) {
    in_column <- frame[[columns]] == c
    dom <- subset(d, in_column)
    for (r in levels(frame[[rows]])) {
      y <- as.numeric(frame[[rows]] == r)
      d2 <- update(d, .y = y, .cell = y * in_column)
      dom2 <- subset(d2, in_column)
      t <- svytotal(~.cell, d2)
      m <- svymean(~.y, dom2)
      out[[length(out) + 1]] <- list(row = r, column = c, weighted = unname(coef(t)), totalSE = unname(SE(t)[1]),
                                     columnPct = unname(coef(m)), columnPctSE = unname(SE(m)[1]))
    }
  }
  out
}

run_case <- function(name, kind, method, margins, options = list(), rows = "HI_CHOL", columns = "race", zero_every = NULL) {
  d <- design_of(kind)
  if (method == "rake") {
    out <- rake(d, lapply(margins, function(m) as.formula(paste("~", m$variable))), lapply(margins, pop_margin),
                control = list(epsilon = options$epsilon, maxit = options$maxIterations))
  } else if (method == "poststratify") {
    m <- margins[[1]]
    pop <- do.call(rbind, lapply(m$totals, function(cell) { df <- as.data.frame(setNames(as.list(unlist(cell$cell)), m$variables)); df$Freq <- cell$value; df }))
    for (v in m$variables) pop[[v]] <- factor(pop[[v]], levels = levels(frame[[v]]))
    out <- postStratify(d, as.formula(paste("~", paste(m$variables, collapse = "+"))), pop)
  } else {
    f <- as.formula(paste("~", paste(sapply(margins, function(m) m$variable), collapse = "+")))
    bounds <- if (is.null(options$bounds)) c(-Inf, Inf) else unlist(options$bounds)
    out <- calibrate(d, f, pop_vector(margins), calfun = method, bounds = bounds, epsilon = options$epsilon, maxit = options$maxIterations)
  }
  # The same weights as fixed sampling weights: a design without the calibration.
  frame$final <<- weights(out)
  fixed <- design_of(kind, "final")
  fixture <- list(
    case = name, dataset = "datasets/build/nhanes.arrow", design = kind, baseWeight = "WTMEC2YR", method = method, zeroWeightEvery = zero_every,
    options = options, targets = list(margins = margins), rows = rows, columns = columns,
    r = list(version = paste(R.version$major, R.version$minor, sep = "."), survey = as.character(packageVersion("survey")),
             sum = sum(weights(out)), calibrated = figures(out, rows, columns), fixed = figures(fixed, rows, columns))
  )
  writeLines(toJSON(fixture, auto_unbox = TRUE, digits = NA, pretty = TRUE, null = "null"), file.path("test/fixtures/weight-variance", paste0(name, ".json")))
  cat(name, "\n")
}

race <- margin("race", props(`1` = 0.16, `2` = 0.64, `3` = 0.12, `4` = 0.08))
age <- margin("agecat", props(`1` = 0.26, `2` = 0.27, `3` = 0.28, `4` = 0.19))
sex <- margin("RIAGENDR", props(`1` = 0.49, `2` = 0.51))
cells <- list()
for (s in 1:2) for (a in 1:4) cells[[length(cells) + 1]] <- list(cell = c(as.character(s), as.character(a)), value = 1e7 * (s + a))
interlocked <- list(list(variables = c("RIAGENDR", "agecat"), totals = cells))

run_case("nhanes-taylor-rake", "taylor", "rake", list(race, age, sex), list(epsilon = 1e-8, maxIterations = 100))
run_case("nhanes-taylor-rake-r-defaults", "taylor", "rake", list(race, age), list(epsilon = 1, maxIterations = 10), rows = "HI_CHOL", columns = "RIAGENDR")
run_case("nhanes-taylor-linear", "taylor", "linear", list(race, age, sex), list(epsilon = 1e-7, maxIterations = 50), rows = "HI_CHOL", columns = "agecat")
run_case("nhanes-taylor-linear-bounded", "taylor", "linear", list(race, age, sex), list(epsilon = 1e-7, maxIterations = 50, bounds = c(0.75, 1.3)))
run_case("nhanes-taylor-logit", "taylor", "logit", list(race, age, sex), list(epsilon = 1e-7, maxIterations = 50, bounds = c(0.5, 2)))
run_case("nhanes-taylor-poststratify-interlocked", "taylor", "poststratify", interlocked, rows = "HI_CHOL", columns = "agecat")
run_case("nhanes-simple-rake", "simple", "rake", list(race, age, sex), list(epsilon = 1e-8, maxIterations = 100))
run_case("nhanes-simple-logit", "simple", "logit", list(race, age, sex), list(epsilon = 1e-7, maxIterations = 50, bounds = c(0.5, 2)))

# Base weight 0 for every 50th respondent (1-based row numbers 50, 100, ...). R's design with
# those rows in gives NaN standard errors (their 1/weight is infinite); the engine keeps them,
# and a respondent with base weight 0 takes no part in the calibration. So R's figures here are
# those of the design without them: the same PSUs (none is left empty), the same totals.
full <- frame
zero_every <- 50
frame <- full[seq_len(nrow(full)) %% zero_every != 0, ]
total <- sum(frame$w)
run_case("nhanes-taylor-rake-zero-weights", "taylor", "rake", list(race, age, sex), list(epsilon = 1e-8, maxIterations = 100), zero_every = zero_every)
run_case("nhanes-taylor-linear-zero-weights", "taylor", "linear", list(race, age, sex), list(epsilon = 1e-7, maxIterations = 50), rows = "HI_CHOL", columns = "agecat", zero_every = zero_every)
frame <- full
total <- sum(frame$w)
