// Package jobrunners tests the job runner examples beside it: the Slurm job
// array of examples/slurm, on a single-node cluster that
// examples/slurm/cluster.sh starts, and the Kubernetes Indexed Job of
// examples/kubernetes, whose commands it runs as the Job's pods would. Each
// runs the itarconv built from this checkout over shards it writes, and
// checks that the merged output of the partitioned run holds the same bytes
// as a single run's.
package jobrunners
