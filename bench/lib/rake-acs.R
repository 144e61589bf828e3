# R's survey::rake() on the ACS person file, for bench/weight-bench.js.
# Rscript bench/lib/rake-acs.R ACS.csv.gz targets.json OUT.json
# Reads the weight and the target variables only, rakes with the targets' proportions of
# the base total (as the engine does), times rake() alone, and writes the time and R's
# weighted total per cell of the target variables.
suppressMessages({ library(survey); library(jsonlite) })
args <- commandArgs(trailingOnly = TRUE)
targets <- fromJSON(args[2], simplifyVector = FALSE)
margins <- targets$margins
variables <- sapply(margins, function(m) m$variable)
header <- strsplit(readLines(gzfile(args[1]), n = 1), ",")[[1]]
classes <- ifelse(header %in% c("PWGTP", variables), NA, "NULL")
classes[header == "STATE"] <- ifelse("STATE" %in% variables, "character", "NULL")
read_time <- system.time(data <- read.csv(gzfile(args[1]), colClasses = classes))[["elapsed"]]
for (v in variables) data[[v]] <- factor(as.character(data[[v]]))
design <- svydesign(ids = ~1, weights = ~PWGTP, data = data)
total <- sum(data$PWGTP)
population <- lapply(margins, function(m) {
  levels <- levels(data[[m$variable]])
  df <- data.frame(factor(levels, levels = levels), Freq = as.vector(unlist(m$proportions)[levels]) * total)
  names(df)[1] <- m$variable
  df
})
formulas <- lapply(variables, function(v) as.formula(paste("~", v)))
control <- list(epsilon = targets$epsilon, maxit = targets$maxIterations)
gc()
rake_time <- system.time(raked <- rake(design, formulas, population, control = control))[["elapsed"]]
w <- weights(raked)
cell <- do.call(paste, c(lapply(variables, function(v) as.character(data[[v]])), sep = "|"))
sums <- tapply(w, cell, sum)
writeLines(toJSON(list(readSeconds = read_time, rakeSeconds = rake_time, respondents = nrow(data), sum = sum(w),
  cells = lapply(names(sums), function(k) list(cell = strsplit(k, "|", fixed = TRUE)[[1]], weighted = sums[[k]])),
  r = paste(R.version$major, R.version$minor, sep = "."), survey = as.character(packageVersion("survey"))),
  auto_unbox = TRUE, digits = NA), args[3])
