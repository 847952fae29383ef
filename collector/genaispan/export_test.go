package genaispan

// CountsOf is countsOf, for the package's external tests.
var CountsOf = countsOf
