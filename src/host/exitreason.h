/*
 * The kernel's names of KVM exit reasons, as the kvm_exit tracepoint prints
 * them (VMX_EXIT_REASONS and SVM_EXIT_REASONS in arch/x86/include/uapi/asm/
 * vmx.h and svm.h): the numbers are what its exit_reason and isa fields carry.
 */
#ifndef LATSCOPE_HOST_EXITREASON_H
#define LATSCOPE_HOST_EXITREASON_H

#include <stdbool.h>
#include <stdint.h>

/* kvm_exit's isa field. */
#define HOST_ISA_VMX 1u
#define HOST_ISA_SVM 2u

/* "EPT_VIOLATION", "npf", ...; NULL when the table has no such reason.  A
 * VMX reason's upper 16 bits are flags (failed entry, bus lock): the name is
 * the basic reason's, as the tracepoint prints it. */
const char *host_exit_reason_name(unsigned isa, uint64_t reason);

/* Whether the exit is the guest halting (HLT): the time after it, polling
 * or asleep, is the guest idle. */
bool host_exit_is_halt(unsigned isa, uint64_t reason);

#endif
