/* meson's check that clang builds BPF objects with what the collector includes. */
#include <linux/bpf.h>
#include <linux/types.h>

#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "GPL";
