// Command perfdoc turns the output of scripts/bench.sh's go test -bench run
// into docs/performance.md: the targets, each against the
// benchmark that measures it and the anchor it is compared with, then
// every sized benchmark with its time, memory and growth exponent.
//
//	go run ./internal/cmd/perfdoc < bench.txt > docs/performance.md
package main

import (
	"fmt"
	"io"
	"os"
)

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "perfdoc:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	rs, meta, err := parse(in)
	if err != nil {
		return err
	}
	if len(rs) == 0 {
		return fmt.Errorf("no benchmark results in the input")
	}
	_, err = io.WriteString(out, render(rs, meta))
	return err
}
