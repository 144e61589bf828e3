# Reference figures for tables whose weight is 0 for some respondents, made by R's survey
# package: NHANES with every 50th respondent's WTMEC2YR set to 0 (1-based rows 50, 100, ...),
# under the simple design (ids = ~1) and the Taylor design (strata SDMVSTRA, PSUs SDMVPSU,
# nested). Per cell of HI_CHOL x race: the total and its SE, the column proportion and its SE
# (race as a domain), and R's design effect (deff = "replace"), which counts only respondents
# with a weight above 0. Run from the repository root:  Rscript scripts/zero-weight-fixtures.R
# Writes test/fixtures/zero-weights/nhanes-every-50.json.
suppressMessages({ library(survey); library(jsonlite) })
options(survey.lonely.psu = "fail")
nhanes <- read.csv(gzfile("datasets/nhanes_2009_2010_survey.csv.gz"))
every <- 50
frame <- data.frame(w = ifelse(seq_len(nrow(nhanes)) %% every == 0, 0, nhanes$WTMEC2YR), psu = nhanes$SDMVPSU, strata = nhanes$SDMVSTRA)
key <- function(x) ifelse(is.na(x), "NA", as.character(x))
frame$HI_CHOL <- factor(key(nhanes$HI_CHOL))
frame$race <- factor(key(nhanes$race))
figures <- function(d) {
  out <- list()
  for (c in levels(frame$race)) {
    in_column <- frame$race == c
    for (r in levels(frame$HI_CHOL)) {
      y <- as.numeric(frame$HI_CHOL == r)
      d2 <- update(d, .y = y, .cell = y * in_column)
      t <- svytotal(~.cell, d2)
      m <- svymean(~.y, subset(d2, in_column), deff = "replace")
      out[[length(out) + 1]] <- list(row = r, column = c, weighted = unname(coef(t)), totalSE = unname(SE(t)[1]),
                                     columnPct = unname(coef(m)), columnPctSE = unname(SE(m)[1]), deff = unname(deff(m)[1]))
    }
  }
  out
}
fixture <- list(
  every = every, weight = "WTMEC2YR", rows = "HI_CHOL", columns = "race", zeroWeights = sum(frame$w == 0),
  r = list(version = paste(R.version$major, R.version$minor, sep = "."), survey = as.character(packageVersion("survey")),
           simple = figures(svydesign(ids = ~1, weights = ~w, data = frame)),
           taylor = figures(svydesign(ids = ~psu, strata = ~strata, nest = TRUE, weights = ~w, data = frame)))
)
dir.create("test/fixtures/zero-weights", showWarnings = FALSE)
writeLines(toJSON(fixture, auto_unbox = TRUE, digits = NA, pretty = TRUE), "test/fixtures/zero-weights/nhanes-every-50.json")
