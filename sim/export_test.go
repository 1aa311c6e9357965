package sim

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func exportTestResult() *Result {
	return &Result{
		Jobs: []JobRecord{
			{ID: "a", Tenant: "t1", GPUs: 2, Arrival: 0, FirstRun: 360 * time.Second, Ran: true,
				Finish: 1000500 * time.Millisecond, Finished: true, Exclusive: 600 * time.Second,
				ActiveJobs: 1.5, GPUSeconds: 1281, Preemptions: 2, Migrations: 1},
			{ID: "b,c", GPUs: 1, Arrival: 90 * time.Second, Exclusive: 30 * time.Minute, ActiveJobs: 2},
		},
		Rounds: []RoundRecord{
			{Start: 0, Length: 360 * time.Second, Active: 1, Running: 1, BusyGPUs: 2, GPUs: 4},
			{Start: 360 * time.Second, Length: 360 * time.Second, Active: 2, Running: 1, BusyGPUs: 2, GPUs: 4},
		},
	}
}

const exportWantJobsCSV = `id,tenant,gpus,arrival,first_run,ran,finish,finished,jct,exclusive,active_jobs,gpu_seconds,preemptions,migrations,unscheduled
a,t1,2,0,360,true,1000.5,true,1000.5,600,1.5,1281,2,1,
"b,c",,1,90,,false,,false,,1800,2,0,0,0,
`

const exportWantRoundsCSV = `start,length,active,running,busy_gpus,gpus
0,360,1,1,2,4
360,360,2,1,2,4
`

const exportWantJSON = `{
  "jobs": [
    {
      "id": "a",
      "tenant": "t1",
      "gpus": 2,
      "arrival": 0,
      "first_run": 360,
      "finish": 1000.5,
      "jct": 1000.5,
      "exclusive": 600,
      "active_jobs": 1.5,
      "gpu_seconds": 1281,
      "preemptions": 2,
      "migrations": 1
    },
    {
      "id": "b,c",
      "gpus": 1,
      "arrival": 90,
      "first_run": null,
      "finish": null,
      "jct": null,
      "exclusive": 1800,
      "active_jobs": 2,
      "gpu_seconds": 0,
      "preemptions": 0,
      "migrations": 0
    }
  ],
  "rounds": [
    {
      "start": 0,
      "length": 360,
      "active": 1,
      "running": 1,
      "busy_gpus": 2,
      "gpus": 4
    },
    {
      "start": 360,
      "length": 360,
      "active": 2,
      "running": 1,
      "busy_gpus": 2,
      "gpus": 4
    }
  ]
}
`

func TestExport(t *testing.T) {
	r := exportTestResult()
	var jobs, rounds, js bytes.Buffer
	if err := WriteJobsCSV(&jobs, r.Jobs); err != nil {
		t.Fatal(err)
	}
	if err := WriteRoundsCSV(&rounds, r.Rounds); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, got, want string }{
		{"jobs CSV", jobs.String(), exportWantJobsCSV},
		{"rounds CSV", rounds.String(), exportWantRoundsCSV},
		{"JSON", js.String(), exportWantJSON},
	} {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}

	dir := t.TempDir()
	if err := r.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"jobs.csv": exportWantJobsCSV, "rounds.csv": exportWantRoundsCSV, "result.json": exportWantJSON} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, string(b)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", name, diff)
		}
	}
	if err := r.WriteFiles(filepath.Join(dir, "missing")); err == nil {
		t.Error("WriteFiles into a missing directory succeeded")
	}
}

func TestExportEmpty(t *testing.T) {
	var js, jobs bytes.Buffer
	if err := (&Result{}).WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if want := "{\n  \"jobs\": [],\n  \"rounds\": []\n}\n"; js.String() != want {
		t.Errorf("empty JSON %q, want %q", js.String(), want)
	}
	if err := WriteJobsCSV(&jobs, nil); err != nil {
		t.Fatal(err)
	}
	if want := exportWantJobsCSV[:len("id,tenant,gpus,arrival,first_run,ran,finish,finished,jct,exclusive,active_jobs,gpu_seconds,preemptions,migrations,unscheduled\n")]; jobs.String() != want {
		t.Errorf("empty jobs CSV %q, want %q", jobs.String(), want)
	}
}
