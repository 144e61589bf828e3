# Reference figures for a Taylor design whose finite population correction is a column of
# sampling fractions written as R writes numbers with sprintf("%.17g") (0.20000000000000001,
# 0.15384615384615385): NHANES 2009-10 with strata SDMVSTRA, PSUs SDMVPSU (nested) and
# FPCFRAC = PSUs in the sample / PSUs in the population of the stratum, the population being
# 10 + 3 * (SDMVSTRA - 75) PSUs. Per cell of HI_CHOL x agecat: the total and its SE, the
# column proportion and its SE (agecat as a domain), from svydesign(fpc = ~FPCFRAC) over the
# file as read back by read.csv. Run from the repository root:
#   Rscript scripts/fpc-fraction-fixtures.R
# Writes test/fixtures/fpc-fraction/nhanes-fpcfrac.csv.gz and nhanes-fpcfrac.json.
suppressMessages({ library(survey); library(jsonlite) })
options(survey.lonely.psu = "fail")
nhanes <- read.csv(gzfile("datasets/nhanes_2009_2010_survey.csv.gz"))
psus <- tapply(nhanes$SDMVPSU, nhanes$SDMVSTRA, function(p) length(unique(p)))
nhanes$FPCFRAC <- as.vector(psus[as.character(nhanes$SDMVSTRA)]) / (10 + 3 * (nhanes$SDMVSTRA - 75))
out <- "test/fixtures/fpc-fraction"
dir.create(out, showWarnings = FALSE)
text <- nhanes
for (name in names(text)) {
  v <- text[[name]]
  text[[name]] <- ifelse(is.na(v), "", if (is.numeric(v)) sprintf("%.17g", v) else as.character(v))
}
con <- gzfile(file.path(out, "nhanes-fpcfrac.csv.gz"), "w")
write.csv(text, con, row.names = FALSE, quote = FALSE)
close(con)
# The figures are those of the file as written.
frame <- read.csv(gzfile(file.path(out, "nhanes-fpcfrac.csv.gz")))
key <- function(x) ifelse(is.na(x), "NA", as.character(x))
frame$HI_CHOL_f <- factor(key(frame$HI_CHOL))
frame$agecat_f <- factor(key(frame$agecat))
design <- svydesign(ids = ~SDMVPSU, strata = ~SDMVSTRA, nest = TRUE, weights = ~WTMEC2YR, fpc = ~FPCFRAC, data = frame)
figures <- list()
for (c in levels(frame$agecat_f)) {
  in_column <- frame$agecat_f == c
  for (r in levels(frame$HI_CHOL_f)) {
    y <- as.numeric(frame$HI_CHOL_f == r)
    d2 <- update(design, .y = y, .cell = y * in_column)
    t <- svytotal(~.cell, d2)
    m <- svymean(~.y, subset(d2, in_column))
    figures[[length(figures) + 1]] <- list(row = r, column = c, weighted = unname(coef(t)), totalSE = unname(SE(t)[1]),
                                           columnPct = unname(coef(m)), columnPctSE = unname(SE(m)[1]))
  }
}
fixture <- list(
  file = "nhanes-fpcfrac.csv.gz", weight = "WTMEC2YR", strata = "SDMVSTRA", psu = "SDMVPSU", fpc = "FPCFRAC", rows = "HI_CHOL", columns = "agecat",
  fractions = unique(text$FPCFRAC),
  r = list(version = paste(R.version$major, R.version$minor, sep = "."), survey = as.character(packageVersion("survey")), figures = figures)
)
writeLines(toJSON(fixture, auto_unbox = TRUE, digits = NA, pretty = TRUE), file.path(out, "nhanes-fpcfrac.json"))
