/*
 * cpuid-sig: the hypervisor's CPUID signature (leaf 0x40000000), as 24 hex
 * digits, read here on its own so that test_sys.py can check what `latscope
 * sys` names against the machine rather than against a guess.  Exit 1 when
 * CPUID says there is no hypervisor.
 */
#include <cpuid.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	unsigned eax, ebx, ecx, edx;
	unsigned char sig[12];

	if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || !(ecx & (1u << 31)))
		return 1;
	__cpuid(0x40000000, eax, ebx, ecx, edx);
	memcpy(sig, &ebx, 4);
	memcpy(sig + 4, &ecx, 4);
	memcpy(sig + 8, &edx, 4);
	for (size_t i = 0; i < sizeof(sig); i++)
		printf("%02x", sig[i]);
	printf("\n");
	return 0;
}
