# Reference figures for column tests between OVERLAPPING columns (respondents in more than
# one column), computed with R's survey package on dummy variables.
#
# Run from the repository root:
#   Rscript scripts/overlap-fixtures.R [/work/shared/datasets]
# (about a minute on 2 shared cores). Writes:
# - test/fixtures/r/overlap.reference.json: per table, every cell's proportion, total and
#   their SEs, and for every pair of columns of a compared group the difference of the two
#   column proportions, its SE, z, p, Holm's adjusted p, and each cell's letters.
# - test/fixtures/r/acs-overlap.csv.gz: a subset of the ACS 2024 person file, the four
#   smallest-sample jurisdictions of the file (STATE 10 Delaware, 11 District of Columbia,
#   50 Vermont, 56 Wyoming), with the columns the tables use. A subset because the tables
#   also run with a strata/PSU design and R's svyratio on 2.7 million rows with a full
#   covariance matrix is slow; the ACS file has no replicate weights, so the design here
#   is an illustrative one: strata = STATE, PSUs = PUMA nested in them (not the Census
#   Bureau's variance method).
#
# Method. Every column c is a 0/1 dummy a_c (a blank counts as 0), every row r a dummy y_r.
# A cell's proportion is the ratio Σ w y_r a_c / Σ w a_c over subset(design, base), and all
# of a row's ratios come from ONE svyratio(~y_r a_1 + ..., ~a_1 + ..., covmat = TRUE), whose
# covariance matrix holds the covariance of two columns' proportions: it is non-zero when
# respondents are in both columns. The difference of two columns is
# svycontrast(<that svyratio>, c(1, -1)); z = difference / SE, p = 2 * pnorm(-|z|) (normal,
# as svycontrast's confidence intervals). The script stops unless each cell's proportion and
# SE equal svymean(~y_r, subset(design, base & a_c)), each total svytotal(~y_r a_c), and each
# difference's SE the delta-method svycontrast(svytotal(...), quote(ya/a - yb/b)).
#
# Valid percentages (two NHANES tables, rows the values of HI_CHOL): a column's denominator
# dummy is a_c times "answered HI_CHOL", as the engine's percentBase 'valid'.
#
# Designs: the simple design svydesign(ids = ~1, weights = ~w) over the whole file (a base is
# a domain of it, as the engine's default domain 'file'); NHANES 2009-10 with
# svydesign(ids = ~SDMVPSU, strata = ~SDMVSTRA, weights = ~WTMEC2YR, nest = TRUE); the ACS
# subset with strata STATE and PSUs PUMA (nest = TRUE).
#
# Needs Debian r-base-core and r-cran-survey. Numbers are written with %.17g.

suppressPackageStartupMessages(library(survey))

args <- commandArgs(trailingOnly = TRUE)
dataDir <- if (length(args) >= 1) args[[1]] else "/work/shared/datasets"
outDir <- "test/fixtures/r"

jnum <- function(x) if (is.na(x) || !is.finite(x)) "null" else sprintf("%.17g", x)
jstr <- function(x) paste0("\"", gsub("\"", "\\\\\"", gsub("\\\\", "\\\\\\\\", x)), "\"")
toJson <- function(x, indent = "") {
  inner <- paste0(indent, "  ")
  if (is.null(x)) return("null")
  if (is.list(x)) {
    if (length(x) == 0) return(if (is.null(names(x))) "[]" else "{}")
    parts <- vapply(x, toJson, character(1), indent = inner)
    if (is.null(names(x))) return(paste0("[\n", inner, paste(parts, collapse = paste0(",\n", inner)), "\n", indent, "]"))
    keys <- vapply(names(x), jstr, character(1))
    return(paste0("{\n", inner, paste(paste0(keys, ": ", parts), collapse = paste0(",\n", inner)), "\n", indent, "}"))
  }
  if (length(x) != 1) return(paste0("[", paste(vapply(as.list(x), toJson, character(1), indent = inner), collapse = ", "), "]"))
  if (is.character(x)) return(jstr(x))
  if (is.logical(x)) return(if (is.na(x)) "null" else if (x) "true" else "false")
  jnum(as.numeric(x))
}

# ACS subset: the header and the rows of four jurisdictions, as text (PUMA keeps its zeros).
acsColumns <- c("STATE", "PUMA", "PWGTP", "AGEP", "SEX", "HICOV", "PRIVCOV", "PUBCOV", "DEAR", "DEYE", "DREM", "DPHY")
acsAll <- read.csv(pipe(paste0("zcat ", shQuote(file.path(dataDir, "acs_pums_2024_person.csv.gz")),
                               " | awk -F, 'NR == 1 || $3 == \"10\" || $3 == \"11\" || $3 == \"50\" || $3 == \"56\"'")),
                   colClasses = "character")
acsText <- acsAll[, acsColumns]
con <- gzfile(file.path(outDir, "acs-overlap.csv.gz"), "w")
write.table(acsText, con, sep = ",", quote = FALSE, row.names = FALSE, na = "")
close(con)
acs <- as.data.frame(lapply(acsText, function(v) suppressWarnings(as.numeric(ifelse(v == "", NA, v)))))

nhanes <- read.csv(gzfile(file.path(dataDir, "nhanes_2009_2010_survey.csv.gz")))
gss <- read.csv(gzfile(file.path(dataDir, "gss_1972_2024_sub.csv.gz")))

# 0/1 dummy of a condition, a blank (NA) counting as 0.
dummy <- function(condition) as.numeric(!is.na(condition) & condition)

# An axis entry: the engine's expression and R's condition on the data.
entry <- function(expr, condition) list(expr = expr, condition = condition)

relative <- function(a, b) abs(a - b) / max(abs(b), 1e-300)
agree <- function(a, b, what) if (relative(a, b) > 1e-9) stop(what, ": ", sprintf("%.17g", a), " vs ", sprintf("%.17g", b))

makeTable <- function(spec) {
  cat("table", spec$id, "\n", file = stderr())
  data <- spec$data
  baseMask <- dummy(eval(spec$base$condition, data)) == 1
  rowDummies <- lapply(spec$rows, function(r) dummy(eval(r$condition, data)))
  colDummies <- lapply(spec$columns, function(c) dummy(eval(c$condition, data)))
  nc <- length(spec$columns)
  # Valid percentages: a column's denominator is its respondents who answered the row variable.
  answered <- if (is.null(spec$valid)) rep(1, nrow(data)) else as.numeric(!is.na(data[[spec$valid]]))
  vars <- data.frame(.base = baseMask)
  for (j in seq_len(nc)) {
    vars[[paste0("a", j)]] <- colDummies[[j]]
    vars[[paste0("d", j)]] <- colDummies[[j]] * answered
  }
  for (i in seq_along(spec$rows)) {
    vars[[paste0("y", i)]] <- rowDummies[[i]]
    for (j in seq_len(nc)) vars[[paste0("y", i, "a", j)]] <- rowDummies[[i]] * colDummies[[j]]
  }
  design <- do.call(update, c(list(spec$design), as.list(vars)))
  sub <- subset(design, .base)
  cells <- list(); comparisons <- list(); letters <- list()
  for (i in seq_along(spec$rows)) {
    numerators <- paste0("y", i, "a", seq_len(nc))
    denominators <- paste0("d", seq_len(nc))
    ratios <- svyratio(as.formula(paste("~", paste(numerators, collapse = "+"))),
                       as.formula(paste("~", paste(denominators, collapse = "+"))), sub, covmat = TRUE)
    names <- paste0(numerators, "/", denominators)
    p <- coef(ratios)[names]
    se <- sqrt(diag(vcov(ratios))[names])
    totals <- svytotal(as.formula(paste("~", paste(c(numerators, denominators), collapse = "+"))), sub, covmat = TRUE)
    for (j in seq_len(nc)) {
      check <- svymean(as.formula(paste0("~y", i)), eval(bquote(subset(design, .base & .(as.name(paste0("d", j))) == 1))))
      agree(p[[j]], coef(check)[[1]], paste("svyratio vs svymean, proportion", spec$id, i, j))
      agree(se[[j]], SE(check)[[1]], paste("svyratio vs svymean, SE", spec$id, i, j))
      cells[[length(cells) + 1]] <- list(row = spec$rows[[i]]$expr, column = spec$columns[[j]]$expr,
        proportion = p[[j]], se = se[[j]],
        total = coef(totals)[[numerators[j]]], totalSE = SE(totals)[[numerators[j]]])
    }
    for (group in spec$groups) {
      tests <- list()
      for (ka in seq_along(group)) for (kb in seq_along(group)) if (ka < kb) {
        a <- group[[ka]]; b <- group[[kb]]
        contrast <- setNames(rep(0, length(coef(ratios))), names(coef(ratios)))
        contrast[names[a]] <- 1; contrast[names[b]] <- -1
        con <- svycontrast(ratios, contrast)
        delta <- svycontrast(totals, substitute(ya / xa - yb / xb, list(ya = as.name(numerators[a]), xa = as.name(denominators[a]),
                                                                         yb = as.name(numerators[b]), xb = as.name(denominators[b]))))
        agree(SE(con)[[1]], SE(delta)[[1]], paste("svyratio contrast vs delta method", spec$id, i, a, b))
        both <- baseMask & colDummies[[a]] == 1 & colDummies[[b]] == 1 & answered == 1
        z <- coef(con)[[1]] / SE(con)[[1]]
        tests[[length(tests) + 1]] <- list(a = a, b = b, difference = coef(con)[[1]], se = SE(con)[[1]], z = z,
                                           p = 2 * pnorm(-abs(z)), both = sum(both))
      }
      pHolm <- p.adjust(vapply(tests, function(t) t$p, 0), "holm")
      greater <- lapply(group, function(x) character(0))
      greaterHolm <- greater
      for (k in seq_along(tests)) {
        t <- tests[[k]]
        comparisons[[length(comparisons) + 1]] <- list(row = spec$rows[[i]]$expr,
          columnA = spec$columns[[t$a]]$expr, columnB = spec$columns[[t$b]]$expr,
          respondentsInBoth = t$both, difference = t$difference, se = t$se, z = t$z, p = t$p, pHolm = pHolm[[k]])
        ka <- match(t$a, group); kb <- match(t$b, group)
        key <- function(position) LETTERS[position]
        if (t$p < 0.05) { if (t$difference > 0) greater[[ka]] <- c(greater[[ka]], key(kb)) else greater[[kb]] <- c(greater[[kb]], key(ka)) }
        if (pHolm[[k]] < 0.05) { if (t$difference > 0) greaterHolm[[ka]] <- c(greaterHolm[[ka]], key(kb)) else greaterHolm[[kb]] <- c(greaterHolm[[kb]], key(ka)) }
      }
      for (k in seq_along(group)) letters[[length(letters) + 1]] <- list(row = spec$rows[[i]]$expr, column = spec$columns[[group[[k]]]]$expr,
        letters = paste(sort(greater[[k]]), collapse = ""), lettersHolm = paste(sort(greaterHolm[[k]]), collapse = ""))
    }
  }
  list(id = spec$id, file = spec$file, build = spec$build, base = spec$base$expr,
       percentBase = if (is.null(spec$valid)) "total" else "valid", rowVariable = spec$valid,
       rows = lapply(spec$rows, function(r) r$expr), columns = lapply(spec$columns, function(c) c$expr),
       groups = lapply(spec$groups, function(g) as.list(g - 1)),
       cells = cells, comparisons = comparisons, letters = letters)
}

simple <- function(data, weight) svydesign(ids = ~1, weights = as.formula(paste0("~", weight)), data = data)
nhanesDesign <- svydesign(ids = ~SDMVPSU, strata = ~SDMVSTRA, weights = ~WTMEC2YR, nest = TRUE, data = nhanes)
acsDesign <- svydesign(ids = ~PUMA, strata = ~STATE, weights = ~PWGTP, nest = TRUE, data = acs)

everyone <- entry("*", quote(rep(TRUE, length(PWGTP))))
acsRows <- list(entry("SEX=1", quote(SEX == 1)), entry("SEX=2", quote(SEX == 2)), entry("AGEP=65..", quote(AGEP >= 65)))
acsColumns <- list(entry("DEAR=1", quote(DEAR == 1)), entry("DEYE=1", quote(DEYE == 1)), entry("DREM=1", quote(DREM == 1)),
                   entry("DPHY=1", quote(DPHY == 1)), entry("HICOV=1", quote(HICOV == 1)), entry("PRIVCOV=1", quote(PRIVCOV == 1)),
                   entry("PUBCOV=1", quote(PUBCOV == 1)))
acsGroups <- list(1:4, 5:7)
nhanesRows <- list(entry("HI_CHOL=1", quote(HI_CHOL == 1)), entry("HI_CHOL=0", quote(HI_CHOL == 0)), entry("race=1", quote(race == 1)))
# Men, women, ages 3-4, race 3, high cholesterol: men and women are disjoint (their pair must
# give the disjoint-column figures exactly); every other pair shares respondents.
nhanesColumns <- list(entry("RIAGENDR=1", quote(RIAGENDR == 1)), entry("RIAGENDR=2", quote(RIAGENDR == 2)),
                      entry("agecat=3,4", quote(agecat %in% c(3, 4))), entry("race=3", quote(race == 3)), entry("HI_CHOL=1", quote(HI_CHOL == 1)))
nhanesEveryone <- entry("*", quote(rep(TRUE, length(WTMEC2YR))))
nhanesWomen <- entry("RIAGENDR=2", quote(RIAGENDR == 2))
gssRows <- list(entry("degree=0", quote(degree == 0)), entry("degree=1", quote(degree == 1)), entry("degree=3,4", quote(degree %in% c(3, 4))),
                entry("polviews=1..3", quote(polviews >= 1 & polviews <= 3)))
gssColumns <- list(entry("sex=1", quote(sex == 1)), entry("sex=2", quote(sex == 2)), entry("race=2,3", quote(race %in% c(2, 3))),
                   entry("age=18..34", quote(age >= 18 & age <= 34)), entry("relig=1", quote(relig == 1)))

specs <- list(
  list(id = "acs-simple", file = "acs-overlap", build = list(weight = "PWGTP"), data = acs, design = simple(acs, "PWGTP"),
       base = everyone, rows = acsRows, columns = acsColumns, groups = acsGroups),
  list(id = "acs-design", file = "acs-overlap", build = list(weight = "PWGTP", strata = "STATE", psu = "PUMA", nest = TRUE), data = acs, design = acsDesign,
       base = everyone, rows = acsRows, columns = acsColumns, groups = acsGroups),
  list(id = "acs-design-65", file = "acs-overlap", build = list(weight = "PWGTP", strata = "STATE", psu = "PUMA", nest = TRUE), data = acs, design = acsDesign,
       base = entry("AGEP=65..", quote(AGEP >= 65)), rows = acsRows[1:2], columns = acsColumns, groups = acsGroups),
  list(id = "nhanes-simple", file = "nhanes", build = list(weight = "WTMEC2YR"), data = nhanes, design = simple(nhanes, "WTMEC2YR"),
       base = nhanesEveryone, rows = nhanesRows, columns = nhanesColumns, groups = list(1:5)),
  list(id = "nhanes-design", file = "nhanes", build = list(weight = "WTMEC2YR", strata = "SDMVSTRA", psu = "SDMVPSU", nest = TRUE), data = nhanes,
       design = nhanesDesign, base = nhanesEveryone, rows = nhanesRows, columns = nhanesColumns, groups = list(1:5)),
  list(id = "nhanes-design-women", file = "nhanes", build = list(weight = "WTMEC2YR", strata = "SDMVSTRA", psu = "SDMVPSU", nest = TRUE), data = nhanes,
       design = nhanesDesign, base = nhanesWomen, rows = nhanesRows, columns = nhanesColumns[3:5], groups = list(1:3)),
  list(id = "nhanes-simple-valid", file = "nhanes", build = list(weight = "WTMEC2YR"), data = nhanes, design = simple(nhanes, "WTMEC2YR"),
       base = nhanesEveryone, rows = nhanesRows[1:2][2:1], columns = nhanesColumns[1:4], groups = list(1:4), valid = "HI_CHOL"),
  list(id = "nhanes-design-valid", file = "nhanes", build = list(weight = "WTMEC2YR", strata = "SDMVSTRA", psu = "SDMVPSU", nest = TRUE), data = nhanes,
       design = nhanesDesign, base = nhanesEveryone, rows = nhanesRows[1:2][2:1], columns = nhanesColumns[1:4], groups = list(1:4), valid = "HI_CHOL"),
  list(id = "gss-2024-simple", file = "gss", build = list(weight = "wtssps"), data = gss, design = simple(gss, "wtssps"),
       base = entry("year=2024", quote(year == 2024)), rows = gssRows, columns = gssColumns, groups = list(1:5))
)

tables <- lapply(specs, makeTable)
out <- list(meta = list(r = R.version.string, survey = as.character(packageVersion("survey")),
                        acsSubset = "STATE 10, 11, 50, 56 of acs_pums_2024_person.csv.gz", acsRespondents = nrow(acs)),
            tables = tables)
writeLines(toJson(out), file.path(outDir, "overlap.reference.json"))
cat("wrote", file.path(outDir, "overlap.reference.json"), "and acs-overlap.csv.gz:", nrow(acs), "ACS respondents\n", file = stderr())
