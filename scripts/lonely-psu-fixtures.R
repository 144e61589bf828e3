# Reference figures for a lonely stratum under a raked weight, made by R's survey package:
# NHANES with stratum 75's two PSUs merged into one, raked to race and age margins; the
# domain "not stratum 75" (R's subset()) and the total of HI_CHOL = 1 in it. Under the plain
# design the domain does not reach the lonely stratum, so lonely.psu = "fail" still answers;
# under the raked design the calibration's residuals reach it, so "fail" fails and "adjust"
# answers. Run from the repository root:  Rscript scripts/lonely-psu-fixtures.R
# Writes test/fixtures/lonely-psu/nhanes-stratum-75.json.
suppressMessages({ library(survey); library(jsonlite) })
nhanes <- read.csv(gzfile("datasets/nhanes_2009_2010_survey.csv.gz"))
frame <- data.frame(w = nhanes$WTMEC2YR, psu = nhanes$SDMVPSU, strata = nhanes$SDMVSTRA)
frame$psu[frame$strata == 75] <- 1
frame$race <- factor(nhanes$race)
frame$agecat <- factor(nhanes$agecat)
frame$chol <- !is.na(nhanes$HI_CHOL) & nhanes$HI_CHOL == 1
frame$inDomain <- frame$strata != 75
total <- sum(frame$w)
race <- c(`1` = 0.16, `2` = 0.64, `3` = 0.12, `4` = 0.08)
age <- c(`1` = 0.26, `2` = 0.27, `3` = 0.28, `4` = 0.19)
pop <- function(variable, p) { df <- data.frame(factor(names(p), levels = levels(frame[[variable]])), Freq = unname(p) * total); names(df)[1] <- variable; df }
figure <- function(lonely, raked) {
  options(survey.lonely.psu = lonely)
  d <- svydesign(ids = ~psu, strata = ~strata, nest = TRUE, weights = ~w, data = frame)
  if (raked) d <- rake(d, list(~race, ~agecat), list(pop("race", race), pop("agecat", age)), control = list(epsilon = 1e-8, maxit = 100))
  tryCatch({
    t <- svytotal(~chol, subset(d, inDomain))
    list(total = unname(coef(t)["cholTRUE"]), totalSE = unname(SE(t)["cholTRUE"]))
  }, error = function(e) list(error = conditionMessage(e)))
}
fixture <- list(
  mergedStratum = 75, margins = list(list(variable = "race", proportions = as.list(race)), list(variable = "agecat", proportions = as.list(age))),
  epsilon = 1e-8, maxIterations = 100, base = "not SDMVSTRA=75", row = "HI_CHOL=1",
  r = list(version = paste(R.version$major, R.version$minor, sep = "."), survey = as.character(packageVersion("survey")),
           plainFail = figure("fail", FALSE), rakedFail = figure("fail", TRUE), rakedAdjust = figure("adjust", TRUE))
)
writeLines(toJSON(fixture, auto_unbox = TRUE, digits = NA, pretty = TRUE), "test/fixtures/lonely-psu/nhanes-stratum-75.json")
