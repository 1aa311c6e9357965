package sim

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// exportSeconds formats a duration in seconds, as short as exact.
func exportSeconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}

func exportFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// JobsCSVHeader is the header row WriteJobsCSV writes.
var JobsCSVHeader = []string{"id", "tenant", "gpus", "arrival", "first_run", "ran", "finish", "finished", "jct", "exclusive", "active_jobs", "gpu_seconds", "preemptions", "migrations", "unscheduled"}

// RoundsCSVHeader is the header row WriteRoundsCSV writes.
var RoundsCSVHeader = []string{"start", "length", "active", "running", "busy_gpus", "gpus"}

// WriteJobsCSV writes job records as CSV: the JobsCSVHeader row, then one
// row per record in the order given. Times (arrival, first_run, finish,
// jct = finish − arrival, exclusive) are in seconds; first_run is empty if
// the job never ran, finish and jct are empty if it did not finish; ran and
// finished are "true" or "false"; unscheduled is the reason the policy left
// the job out, if it did.
func WriteJobsCSV(w io.Writer, jobs []JobRecord) error {
	cw := csv.NewWriter(w)
	cw.Write(JobsCSVHeader)
	for _, j := range jobs {
		firstRun, finish, jct := "", "", ""
		if j.Ran {
			firstRun = exportSeconds(j.FirstRun)
		}
		if j.Finished {
			finish, jct = exportSeconds(j.Finish), exportSeconds(j.JCT())
		}
		cw.Write([]string{
			j.ID, j.Tenant, strconv.Itoa(j.GPUs),
			exportSeconds(j.Arrival), firstRun, strconv.FormatBool(j.Ran),
			finish, strconv.FormatBool(j.Finished), jct,
			exportSeconds(j.Exclusive), exportFloat(j.ActiveJobs), exportFloat(j.GPUSeconds),
			strconv.Itoa(j.Preemptions), strconv.Itoa(j.Migrations), j.Unscheduled,
		})
	}
	cw.Flush()
	return cw.Error()
}

// WriteRoundsCSV writes round records as CSV: the RoundsCSVHeader row, then
// one row per round. start and length are in seconds.
func WriteRoundsCSV(w io.Writer, rounds []RoundRecord) error {
	cw := csv.NewWriter(w)
	cw.Write(RoundsCSVHeader)
	for _, r := range rounds {
		cw.Write([]string{
			exportSeconds(r.Start), exportSeconds(r.Length),
			strconv.Itoa(r.Active), strconv.Itoa(r.Running),
			strconv.Itoa(r.BusyGPUs), strconv.Itoa(r.GPUs),
		})
	}
	cw.Flush()
	return cw.Error()
}

// exportJob is a JobRecord with times in seconds.
type exportJob struct {
	ID          string   `json:"id"`
	Tenant      string   `json:"tenant,omitempty"`
	GPUs        int      `json:"gpus"`
	Arrival     float64  `json:"arrival"`
	FirstRun    *float64 `json:"first_run"`
	Finish      *float64 `json:"finish"`
	JCT         *float64 `json:"jct"`
	Exclusive   float64  `json:"exclusive"`
	ActiveJobs  float64  `json:"active_jobs"`
	GPUSeconds  float64  `json:"gpu_seconds"`
	Preemptions int      `json:"preemptions"`
	Migrations  int      `json:"migrations"`
	Unscheduled string   `json:"unscheduled,omitempty"`
}

// exportRound is a RoundRecord with times in seconds.
type exportRound struct {
	Start    float64 `json:"start"`
	Length   float64 `json:"length"`
	Active   int     `json:"active"`
	Running  int     `json:"running"`
	BusyGPUs int     `json:"busy_gpus"`
	GPUs     int     `json:"gpus"`
}

// WriteJSON writes the result as one indented JSON object
// {"jobs": [...], "rounds": [...]} with the fields of the CSV files and
// times in seconds (unlike encoding/json applied to a Result, which writes
// time.Duration in nanoseconds): first_run is null if the job never ran,
// finish and jct are null if it did not finish.
func (r *Result) WriteJSON(w io.Writer) error {
	out := struct {
		Jobs   []exportJob   `json:"jobs"`
		Rounds []exportRound `json:"rounds"`
	}{Jobs: make([]exportJob, len(r.Jobs)), Rounds: make([]exportRound, len(r.Rounds))}
	sec := func(d time.Duration) *float64 { s := d.Seconds(); return &s }
	for i, j := range r.Jobs {
		e := exportJob{
			ID: j.ID, Tenant: j.Tenant, GPUs: j.GPUs,
			Arrival: j.Arrival.Seconds(), Exclusive: j.Exclusive.Seconds(),
			ActiveJobs: j.ActiveJobs, GPUSeconds: j.GPUSeconds,
			Preemptions: j.Preemptions, Migrations: j.Migrations, Unscheduled: j.Unscheduled,
		}
		if j.Ran {
			e.FirstRun = sec(j.FirstRun)
		}
		if j.Finished {
			e.Finish, e.JCT = sec(j.Finish), sec(j.JCT())
		}
		out.Jobs[i] = e
	}
	for i, rd := range r.Rounds {
		out.Rounds[i] = exportRound{
			Start: rd.Start.Seconds(), Length: rd.Length.Seconds(),
			Active: rd.Active, Running: rd.Running, BusyGPUs: rd.BusyGPUs, GPUs: rd.GPUs,
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return fmt.Errorf("sim: export: %w", err)
	}
	return nil
}

// WriteFiles writes the result into directory dir, which must exist, as
// jobs.csv (WriteJobsCSV), rounds.csv (WriteRoundsCSV) and result.json
// (WriteJSON), replacing files of those names.
func (r *Result) WriteFiles(dir string) error {
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"jobs.csv", func(w io.Writer) error { return WriteJobsCSV(w, r.Jobs) }},
		{"rounds.csv", func(w io.Writer) error { return WriteRoundsCSV(w, r.Rounds) }},
		{"result.json", r.WriteJSON},
	}
	for _, f := range files {
		if err := exportFile(filepath.Join(dir, f.name), f.write); err != nil {
			return err
		}
	}
	return nil
}

func exportFile(path string, write func(io.Writer) error) error {
	fh, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("sim: export: %w", err)
	}
	err = write(fh)
	if cerr := fh.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	if err != nil {
		return fmt.Errorf("sim: export %s: %w", path, err)
	}
	return nil
}
