package service_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	_ "github.com/dlsched/dlsched/policy/all" // every policy registers itself
	"github.com/dlsched/dlsched/service"
)

// A scheduler written in any language creates a named scheduler once, then
// posts a snapshot each round and carries out the changes it gets back.
func Example() {
	svc, err := service.New(service.Config{}) // Dir: "/var/lib/dlsched" to survive restarts
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(svc) // or: http.ListenAndServe(":8080", svc)
	defer srv.Close()

	call := func(method, path, body string) []byte {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		fmt.Println(method, path, resp.Status)
		return b
	}
	call("PUT", "/v1/schedulers/prod", `{"policy": "tiresias.las"}`)
	b := call("POST", "/v1/allocate?scheduler=prod", `{
	  "now": 0,
	  "cluster": {"servers": [{"id": "node-0", "accelerator": "v100", "gpus": 4}]},
	  "jobs": [
	    {"id": "resnet", "gpus": 2, "throughput": {"v100": 10}},
	    {"id": "bert", "gpus": 4, "gpus_per_worker": 4, "throughput": {"v100": 3}, "attained_gpu_seconds": 36000}
	  ]}`)
	var answer struct {
		Changes []struct {
			Job  string
			Kind string
			To   []struct {
				Server string
				GPUs   int
			}
		}
		Unscheduled map[string]string
	}
	if err := json.Unmarshal(b, &answer); err != nil {
		log.Fatal(err)
	}
	for _, c := range answer.Changes {
		fmt.Println(c.Kind, c.Job, c.To)
	}
	// Output:
	// PUT /v1/schedulers/prod 201 Created
	// POST /v1/allocate?scheduler=prod 200 OK
	// start resnet [{node-0 2}]
}
