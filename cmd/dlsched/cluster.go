package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/dlsched/dlsched/allocation"
)

// serverGPUs is the size of the servers --cluster builds when a type gives
// no PER_SERVER.
const serverGPUs = 4

// clusterSyntax is --cluster's syntax, for its usage and errors.
const clusterSyntax = "TYPE=GPUS[/PER_SERVER][:CPUSc][:MEMg],… such as v100=32/8:48c:500g,k80=16, or a JSON cluster file"

// parseCluster reads --cluster: a JSON file in a snapshot's "cluster"
// schema, or TYPE=GPUS[/PER_SERVER][:CPUSc][:MEMg],… (see clusterPart). A
// spec is a file if it ends in .json, or names an existing file and has
// no '=', so that neither form can be mistaken for the other.
func parseCluster(spec string) (allocation.Cluster, error) {
	if strings.HasSuffix(spec, ".json") || !strings.Contains(spec, "=") && isFile(spec) {
		return readCluster(spec)
	}
	var c allocation.Cluster
	if strings.TrimSpace(spec) == "" {
		return c, errors.New("empty; want " + clusterSyntax)
	}
	seen := make(map[string]bool)
	for _, part := range strings.Split(spec, ",") {
		servers, err := clusterPart(strings.TrimSpace(part))
		if err != nil {
			return c, err
		}
		typ := string(servers[0].Accelerator)
		if seen[typ] {
			return c, fmt.Errorf("type %q listed twice", typ)
		}
		seen[typ] = true
		c.Servers = append(c.Servers, servers...)
	}
	return c, c.Validate()
}

func isFile(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.Mode().IsRegular()
}

// clusterPart reads TYPE=GPUS[/PER_SERVER][:CPUSc][:MEMg] into servers of
// PER_SERVER GPUs (default serverGPUs) named TYPE-0, TYPE-1, …, each with
// CPUS cores and MEM GB if given (zero: not tracked). Without CPUs or
// memory the last server takes the remainder; with them, GPUS must fill
// whole servers, or the last would get more CPU and memory per GPU.
func clusterPart(part string) ([]allocation.Server, error) {
	typ, rest, ok := strings.Cut(part, "=")
	typ = strings.TrimSpace(typ)
	if !ok || typ == "" {
		return nil, fmt.Errorf("%q: want TYPE=GPUS[/PER_SERVER][:CPUSc][:MEMg], such as v100=32/8:48c:500g", part)
	}
	fields := strings.Split(rest, ":")
	gpus, per, err := gpuCounts(part, fields[0])
	if err != nil {
		return nil, err
	}
	cpus, mem, err := serverResources(part, fields[1:])
	if err != nil {
		return nil, err
	}
	if (cpus > 0 || mem > 0) && gpus%per != 0 {
		return nil, fmt.Errorf("%q: %d GPUs do not fill servers of %d; with cores or memory, GPUS must be a multiple of PER_SERVER", part, gpus, per)
	}
	var servers []allocation.Server
	for i := 0; gpus > 0; i++ {
		g := min(gpus, per)
		servers = append(servers, allocation.Server{ID: fmt.Sprintf("%s-%d", typ, i),
			Accelerator: allocation.Accelerator(typ), GPUs: g, CPUs: cpus, MemoryGB: mem})
		gpus -= g
	}
	return servers, nil
}

// gpuCounts reads GPUS[/PER_SERVER].
func gpuCounts(part, spec string) (gpus, per int, err error) {
	n, p, hasPer := strings.Cut(spec, "/")
	if gpus, err = strconv.Atoi(strings.TrimSpace(n)); err != nil || gpus <= 0 || gpus > 1<<20 {
		return 0, 0, fmt.Errorf("%q: GPU count %q is not a positive integer", part, n)
	}
	per = serverGPUs
	if hasPer {
		if per, err = strconv.Atoi(strings.TrimSpace(p)); err != nil || per <= 0 || per > allocation.MaxServerGPUs {
			return 0, 0, fmt.Errorf("%q: GPUs per server %q is not a positive integer", part, p)
		}
	}
	return gpus, per, nil
}

// serverResources reads the :CPUSc and :MEMg suffixes, each at most once.
func serverResources(part string, fields []string) (cpus, mem float64, err error) {
	for _, f := range fields {
		f = strings.TrimSpace(f)
		unit := strings.ToLower(f[len(f)-min(len(f), 1):])
		x, err := strconv.ParseFloat(strings.TrimSpace(f[:len(f)-len(unit)]), 64)
		bad := err != nil || x <= 0 || x > 1e9
		switch {
		case unit == "c" && !bad && cpus == 0:
			cpus = x
		case unit == "g" && !bad && mem == 0:
			mem = x
		case unit == "c" || unit == "g":
			return 0, 0, fmt.Errorf("%q: %q: want one positive count of cores (48c) and of GB (500g)", part, f)
		default:
			return 0, 0, fmt.Errorf("%q: %q: want CPU cores such as 48c or memory such as 500g", part, f)
		}
	}
	return cpus, mem, nil
}

// readCluster reads a cluster file: exactly one JSON object in the schema
// of a snapshot's "cluster", {"servers": [{"id", "accelerator", "gpus",
// "cpus", "memory_gb"}, …]}, valid and with at least one GPU.
func readCluster(path string) (allocation.Cluster, error) {
	var c allocation.Cluster
	data, err := os.ReadFile(path)
	if err != nil {
		return c, err
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&c); err != nil {
		return c, fmt.Errorf("%s: %v", path, err)
	}
	if d.More() {
		return c, fmt.Errorf("%s: trailing data after the cluster", path)
	}
	if err := c.Validate(); err != nil {
		return c, fmt.Errorf("%s: %v", path, err)
	}
	if c.TotalGPUs() == 0 {
		return c, fmt.Errorf("%s: the cluster has no GPUs", path)
	}
	return c, nil
}

// clusterShape describes the cluster by type and server shape, such as
// "48 GPUs: v100 4 × 8 GPUs, 48 cores, 500 GB; k80 4 × 4 GPUs".
func clusterShape(c allocation.Cluster) string {
	type shape struct {
		acc       allocation.Accelerator
		gpus      int
		cpus, mem float64
	}
	var order []shape // by type, then shape, each in order of appearance
	count := map[shape]int{}
	for _, s := range c.Servers {
		k := shape{s.Accelerator, s.GPUs, s.CPUs, s.MemoryGB}
		if count[k] == 0 {
			i := len(order) // after the last shape of the type, if any
			for j, o := range order {
				if o.acc == k.acc {
					i = j + 1
				}
			}
			order = slices.Insert(order, i, k)
		}
		count[k]++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d GPUs", c.TotalGPUs())
	for i, k := range order {
		switch {
		case i == 0:
			fmt.Fprintf(&b, ": %s ", k.acc)
		case k.acc != order[i-1].acc:
			fmt.Fprintf(&b, "; %s ", k.acc)
		default:
			b.WriteString(" + ")
		}
		fmt.Fprintf(&b, "%d × %d GPUs", count[k], k.gpus)
		if k.cpus > 0 {
			fmt.Fprintf(&b, ", %g cores", k.cpus)
		}
		if k.mem > 0 {
			fmt.Fprintf(&b, ", %g GB", k.mem)
		}
	}
	return b.String()
}
