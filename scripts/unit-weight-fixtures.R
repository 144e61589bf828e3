# Reference figures for weights raked from unit weights (crosstab weight --unweighted, the
# library's baseWeight: null), made by R's survey package: svydesign() without weights (every
# respondent 1), raked with rake() to margins of race, agecat and RIAGENDR. Run from the
# repository root:  Rscript scripts/unit-weight-fixtures.R
# Writes test/fixtures/weight-variance/nhanes-{taylor,simple}-rake-unit.json in the shape of
# scripts/weight-variance-fixtures.R (baseWeight null): per cell of rows x columns R's total,
# its SE, the column proportion and its SE under the raked design (taylor: NHANES strata and
# PSUs, nested), and the same with the raked weights as fixed weights (simple: ids = ~1).
suppressMessages({ library(survey); library(jsonlite) })
options(survey.lonely.psu = "fail")

nhanes <- read.csv(gzfile("datasets/nhanes_2009_2010_survey.csv.gz"))
key <- function(x) ifelse(is.na(x), "NA", as.character(x))
as_factor <- function(x) factor(key(x), levels = unique(c(as.character(sort(unique(x[!is.na(x)]))), if (any(is.na(x))) "NA")))
props <- function(...) { p <- c(...); p / sum(p) }
margin <- function(variable, proportions) list(variable = variable, proportions = as.list(proportions))

frame <- data.frame(psu = nhanes$SDMVPSU, strata = nhanes$SDMVSTRA)
for (v in c("race", "agecat", "RIAGENDR", "HI_CHOL")) frame[[v]] <- as_factor(nhanes[[v]])

# No weights: R assumes equal probability, every weight 1.
unit_design <- function(kind) {
  suppressWarnings(if (kind == "taylor") svydesign(ids = ~psu, strata = ~strata, nest = TRUE, data = frame) else svydesign(ids = ~1, data = frame))
}
pop_margin <- function(m, total) {
  levels <- levels(frame[[m$variable]])
  df <- data.frame(factor(levels, levels = levels), Freq = as.vector(unlist(m$proportions)[levels]) * total)
  names(df)[1] <- m$variable
  df
}
figures <- function(d, rows, columns) {
  out <- list()
  for (c in levels(frame[[columns]])) {
    in_column <- frame[[columns]] == c
    for (r in levels(frame[[rows]])) {
      y <- as.numeric(frame[[rows]] == r)
      d2 <- update(d, .y = y, .cell = y * in_column)
      t <- svytotal(~.cell, d2)
      m <- svymean(~.y, subset(d2, in_column))
      out[[length(out) + 1]] <- list(row = r, column = c, weighted = unname(coef(t)), totalSE = unname(SE(t)[1]),
                                     columnPct = unname(coef(m)), columnPctSE = unname(SE(m)[1]))
    }
  }
  out
}

run_case <- function(name, kind, margins, options, total = NULL, rows = "HI_CHOL", columns = "race") {
  d <- unit_design(kind)
  # Proportions scale to the given total, or to the sum of the base weights (the respondents).
  scale <- if (is.null(total)) nrow(frame) else total
  out <- rake(d, lapply(margins, function(m) as.formula(paste("~", m$variable))), lapply(margins, pop_margin, total = scale),
              control = list(epsilon = options$epsilon, maxit = options$maxIterations))
  frame$final <<- weights(out)
  fixed <- svydesign(ids = ~1, weights = ~final, data = frame)
  targets <- list(margins = margins)
  if (!is.null(total)) targets <- c(list(total = total), targets)
  fixture <- list(
    case = name, dataset = "datasets/build/nhanes.arrow", design = kind, baseWeight = NULL, method = "rake", zeroWeightEvery = NULL,
    options = options, targets = targets, rows = rows, columns = columns,
    r = list(version = paste(R.version$major, R.version$minor, sep = "."), survey = as.character(packageVersion("survey")),
             sum = sum(weights(out)), calibrated = figures(out, rows, columns), fixed = figures(fixed, rows, columns))
  )
  writeLines(toJSON(fixture, auto_unbox = TRUE, digits = NA, pretty = TRUE, null = "null"), file.path("test/fixtures/weight-variance", paste0(name, ".json")))
  cat(name, "\n")
}

race <- margin("race", props(`1` = 0.16, `2` = 0.64, `3` = 0.12, `4` = 0.08))
age <- margin("agecat", props(`1` = 0.26, `2` = 0.27, `3` = 0.28, `4` = 0.19))
sex <- margin("RIAGENDR", props(`1` = 0.49, `2` = 0.51))
run_case("nhanes-taylor-rake-unit", "taylor", list(race, age, sex), list(epsilon = 1e-8, maxIterations = 100), total = 2.5e8)
run_case("nhanes-simple-rake-unit", "simple", list(race, age, sex), list(epsilon = 1e-8, maxIterations = 100), columns = "agecat")
