package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/dlsched/dlsched/service"
)

// serve runs the decision service (package service) until ctx ends, then
// stops taking requests and lets those in flight finish.
func serve(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (port 0: any free port)")
	dir := fs.String("state", "", "directory keeping each scheduler's spec and state across restarts (empty: memory only)")
	name := fs.String("policy", "", "create the scheduler \"default\" with this registered policy, unless it exists (empty: none)")
	config := fs.String("config", "", "the default scheduler's policy configuration as a JSON object")
	strict := fs.Bool("strict", false, "the default scheduler fails a decision that would leave a job out")
	maxBytes := fs.Int64("max-body", service.DefaultMaxBytes, "largest request body, in bytes")
	timeout := fs.Duration("timeout", service.DefaultTimeout, "longest time one decision may take")
	if err := parse(fs, args); err != nil {
		return err
	}
	svc, err := service.New(service.Config{Dir: *dir, MaxBytes: *maxBytes, Timeout: *timeout})
	if err != nil {
		return err
	}
	if *name != "" {
		spec := service.Spec{Policy: *name, Config: json.RawMessage(*config), Strict: *strict}
		if _, err := svc.Add(service.DefaultScheduler, spec); err != nil {
			return usageError{err}
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return usageError{err}
	}
	var names []string
	for _, s := range svc.Schedulers() {
		names = append(names, s.Name)
	}
	if len(names) == 0 {
		names = []string{"none yet (PUT /v1/schedulers/NAME creates one)"}
	}
	fmt.Fprintf(stderr, "dlsched: serving on http://%s; schedulers: %s\n", ln.Addr(), strings.Join(names, ", "))
	return listen(ctx, ln, svc, *timeout)
}

// listen serves h on ln until ctx ends; a request in flight then has the
// decision timeout to finish.
func listen(ctx context.Context, ln net.Listener, h http.Handler, timeout time.Duration) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       time.Minute,
		WriteTimeout:      timeout + time.Minute,
		IdleTimeout:       2 * time.Minute,
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	stop, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	err := srv.Shutdown(stop)
	if serr := <-done; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
