// Command dlsched runs dlsched's scheduling policies from the command line.
//
// Usage:
//
//	dlsched policies                       list the registered policies
//	dlsched allocate --policy NAME [--in FILE] [--config JSON] [--strict] [--lenient]
//	                                       read a snapshot (JSON, stdin by
//	                                       default) and print the decision:
//	                                       shares, placement, the jobs left
//	                                       out and why ("unscheduled"), and
//	                                       the changes a binder carries out
//	                                       ("changes": start, stop, keep,
//	                                       migrate, resize); --strict fails
//	                                       instead when a job is left out;
//	                                       an unknown key is an error unless
//	                                       --lenient
//	dlsched allocate --example [--policy NAME]
//	                                       decide on the built-in example
//	dlsched example                        print the built-in example snapshot
//	dlsched serve [--addr HOST:PORT] [--state DIR] [--policy NAME]
//	              [--config JSON] [--strict] [--max-body N] [--timeout D]
//	                                       serve decisions over HTTP (package
//	                                       service): POST /v1/allocate takes a
//	                                       snapshot and answers as allocate
//	                                       does; named schedulers, each with
//	                                       its own policy and state, kept in
//	                                       DIR across restarts; /healthz and
//	                                       Prometheus /metrics. --policy
//	                                       creates the scheduler "default"
//	dlsched simulate [--policy NAME] [--config JSON] [workload flags]
//	                                       simulate a workload under one policy
//	                                       and print its summary
//	dlsched compare [--policies A,B,...|all] [--strict] [--seeds N]
//	                [--rates R1,R2,...] [workload flags]
//	                                       simulate the same workloads under each
//	                                       policy (concurrently, at most one run
//	                                       per CPU) and print one row per policy,
//	                                       ranked by average JCT, with what it
//	                                       ignores of the workload or lacks; a
//	                                       policy that fails is a row with its
//	                                       error, and the command fails only when
//	                                       every policy does, or at the first
//	                                       failure with --strict. --seeds N runs
//	                                       each policy on N generated workloads
//	                                       (seeds S..S+N-1) and prints means ±
//	                                       95% intervals; --rates sweeps the
//	                                       arrival rate (the table is for the
//	                                       first) and prints avg JCT per rate
//
// With no flags, compare runs every registered policy on the mixed
// workload: 160 jobs that carry every system's facts at once (seed 0,
// 8 jobs/h, Philly's durations at a tenth) on 48 GPUs of three types in
// 8-GPU servers with 24 cores and 500 GB each; the first line printed
// describes the setup. A build without CLP solves the LP policies with the
// pure-Go engine, which takes up to about 2.5 times as long on large LPs.
// CLP is compiled in with the clp build tag (go build -tags clp, which needs
// cgo and the CLP library); the default build has only the pure-Go engine.
//
// The workload flags of simulate and compare are:
//
//	--workload NAME|FILE  a built-in generated workload (mixed, the default:
//	                      jobs with every system's facts and physics, see
//	                      package workload; pollux, shockwave, tiresias: the
//	                      same jobs with only that system's facts, on its
//	                      kind of cluster; gavel: Gavel's generator; synergy:
//	                      Synergy's, with CPU- and memory-sensitive jobs on
//	                      8-GPU, 24-core, 500-GB servers), or a file whose
//	                      format is detected from its
//	                      first line: JSON lines (workload.ReadTrace), a Gavel
//	                      trace (7 or 10 tab-separated fields), a Tiresias CSV
//	                      (header job_id,num_gpu,...; implies --events), a
//	                      Pollux workload CSV (header name,time,application,...:
//	                      elastic jobs for policies that choose batch sizes,
//	                      their tuned configurations for the others) or a
//	                      Shockwave trace (12 tab-separated fields: adaptive
//	                      jobs, needs --throughputs). Each has its own default
//	                      cluster, round and restart (see compare -h)
//	--format json|gavel|tiresias|pollux|shockwave
//	                      the file's format, instead of detecting it
//	--jobs N --rate R --seed S [--multi-gpu] [--priorities]
//	                      for a generated workload only: N jobs arriving at R
//	                      per hour
//	--burst B --duration-scale F
//	                      for the mixed workloads: a diurnal cycle of the
//	                      arrival rate, rate·(1 + B·sin(2πt/24h)), and a
//	                      factor on the durations drawn (default 0.1)
//	--models DIR          Pollux's per-model traces for a Pollux workload
//	                      (default: built-in synthetic models)
//	--throughputs FILE    Gavel-format throughputs for a Shockwave trace, such
//	                      as Shockwave's tacc_throughputs.json
//	--cluster v100=32/8:48c:500g,k80=16 | FILE.json
//	                      TYPE=GPUS[/PER_SERVER][:CPUSc][:MEMg],...: GPUs of
//	                      each type in servers of PER_SERVER GPUs (default 4;
//	                      without cores or memory the last server takes the
//	                      remainder), each with CPUS cores and MEM GB if given,
//	                      named TYPE-0, TYPE-1, ...; or a JSON file holding a
//	                      cluster in a snapshot's "cluster" schema
//	--round 360s --recompute 0s --restart 0s
//	                      round length, least time between policy calls, and
//	                      the time a job loses each time it (re)starts
//	--events              event-driven: the policy is also called at every
//	                      arrival, completion and wake-up it asks for
//	                      (Tiresias' demotions, Gandiva's 60 s slices), with
//	                      --round the longest a round may last
//	--window START:END    measure jobs START to END-1 in arrival order (END
//	                      empty: to the end); default all
//	--out DIR             create DIR if need be and write into it; simulate:
//	                      summary.json, jobs.csv, rounds.csv and result.json
//	                      (sim.Result.WriteFiles; times in seconds); compare:
//	                      results.csv, results.json, report.html, sweep.csv
//	                      (with --rates), summary.json (the first workload's
//	                      summary per policy), jct_cdf.svg and utilization.svg
//	--progress            show a progress bar on standard error even when it
//	                      is not a terminal (it is shown on a terminal anyway)
//
// Errors are reported on one line on standard error, with exit status 2 for
// bad input and 1 for a failure to decide.
package main

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/dlsched/dlsched/policy"
	_ "github.com/dlsched/dlsched/policy/all" // every policy registers itself
	"github.com/dlsched/dlsched/service"
)

//go:embed example.json
var example []byte

func main() {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go interrupt(sig, cancel, os.Stderr, os.Exit)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	cancel()
	os.Exit(code)
}

// interrupt cancels the run at the first signal, which lets it stop
// cleanly and keep what it has written, and exits at once, with status
// 130, at the second.
func interrupt(sig <-chan os.Signal, cancel func(), stderr io.Writer, exit func(int)) {
	<-sig
	fmt.Fprintln(stderr, "dlsched: interrupted, stopping; interrupt again to exit at once")
	cancel()
	<-sig
	exit(130)
}

// usageError is bad input from the user: exit status 2.
type usageError struct{ error }

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	err := dispatch(ctx, args, stdin, stdout, stderr)
	if err == nil {
		return 0
	}
	var help helpRequest
	if errors.As(err, &help) {
		help.print(stdout)
		return 0
	}
	fmt.Fprintln(stderr, "dlsched:", strings.ReplaceAll(err.Error(), "\n", " "))
	var u usageError
	if errors.As(err, &u) || errors.Is(err, policy.ErrInvalidSnapshot) ||
		errors.Is(err, policy.ErrUnknownPolicy) || errors.Is(err, policy.ErrInvalidConfig) {
		return 2
	}
	return 1
}

const usage = "usage: dlsched policies | allocate --policy NAME [--in FILE] [--config JSON] [--example] [--strict] [--lenient] | example | serve [--addr --state --policy --config --strict --max-body --timeout] | simulate [--policy NAME] [flags] | compare [--policies A,B,...|all] [--strict] [--seeds N] [--rates R,...] [flags]; " +
	"workload flags: --workload NAME|FILE [--format F] [--jobs --rate --seed --multi-gpu --priorities] [--models DIR] [--throughputs FILE]; --events; " +
	"--cluster --round --recompute --restart --window --out --progress --cpuprofile"

func dispatch(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{errors.New(usage)}
	}
	switch args[0] {
	case "policies":
		w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		for _, p := range policy.Registered() {
			fmt.Fprintf(w, "%s\t%s\n", p.Name, p.Description)
		}
		return w.Flush()
	case "example":
		_, err := stdout.Write(example)
		return err
	case "allocate":
		return allocate(ctx, args[1:], stdin, stdout)
	case "simulate":
		return simulate(ctx, args[1:], stdout, stderr)
	case "compare":
		return compare(ctx, args[1:], stdout, stderr)
	case "serve":
		return serve(ctx, args[1:], stderr)
	case "help", "-h", "--help":
		fmt.Fprintln(stdout, usage)
		return nil
	}
	return usageError{fmt.Errorf("unknown command %q; %s", args[0], usage)}
}

func allocate(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("allocate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	name := fs.String("policy", "gavel.las", "registered policy name")
	in := fs.String("in", "-", "snapshot file, - for standard input")
	config := fs.String("config", "", "policy configuration as a JSON object")
	useExample := fs.Bool("example", false, "use the built-in example snapshot")
	strict := fs.Bool("strict", false, "fail when any job would be left out, instead of scheduling the others")
	lenient := fs.Bool("lenient", false, "ignore unknown snapshot keys and match keys in any case, instead of refusing them")
	if err := parse(fs, args); err != nil {
		return err
	}
	p, err := policy.New(*name, []byte(*config))
	if err != nil {
		return err
	}
	if *strict {
		p = policy.Strict(p)
	}
	var data []byte
	switch {
	case *useExample:
		data = example
	case *in == "-":
		data, err = io.ReadAll(stdin)
	default:
		data, err = os.ReadFile(*in)
	}
	if err != nil {
		return usageError{err}
	}
	snap, err := service.Decode(data, *lenient)
	if err != nil {
		return err
	}
	d, err := p.Allocate(ctx, snap)
	if err != nil {
		return err
	}
	return printDecision(stdout, snap, d)
}

// printDecision writes the decision as JSON, with the changes a binder
// carries out to enact it ("changes", policy.Changes) as one more field:
// what the service answers, indented.
func printDecision(w io.Writer, s *policy.Snapshot, d *policy.Decision) error {
	b, err := service.Answer(s, d)
	if err != nil {
		return err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = out.WriteTo(w)
	return err
}

// helpRequest is -h, -help or --help given to a subcommand: run prints the
// subcommand's flags on standard output and exits 0, as dlsched -h does.
type helpRequest struct{ fs *flag.FlagSet }

func (h helpRequest) Error() string { return h.fs.Name() + ": help requested" }

func (h helpRequest) print(w io.Writer) {
	fmt.Fprintf(w, "usage: dlsched %s [flags]\n\nflags:\n", h.fs.Name())
	h.fs.SetOutput(w)
	h.fs.PrintDefaults()
}

// parse parses a subcommand's flags, which take no positional arguments;
// errors are usage errors named after the subcommand, and a request for
// help is a helpRequest.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return helpRequest{fs}
		}
		return usageError{fmt.Errorf("%s: %v", fs.Name(), err)}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("%s: unexpected argument %q", fs.Name(), fs.Arg(0))}
	}
	return nil
}
