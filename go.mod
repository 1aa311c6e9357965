module github.com/dlsched/dlsched

go 1.26.8

require (
	github.com/google/go-cmp v0.7.0
	github.com/lanl/clp v1.2.0
	gonum.org/v1/gonum v0.17.0
)
