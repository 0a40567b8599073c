/*
 * Symbols through libelf: a symbol's value is a virtual address; the
 * loadable segment that holds it turns it into the file offset the kernel's
 * uprobes take (the same for an executable, PIE or not, and a library).
 */
#include "probe/elfsym.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

/* The symbol's value in the table of section scn, when it is a defined function there. */
static bool find_in(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, const char *name, uint64_t *value)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!data || sh->sh_entsize == 0)
		return false;
	size_t n = sh->sh_size / sh->sh_entsize;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
			continue;
		const int type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		const char *s = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (s && strcmp(s, name) == 0) {
			*value = sym.st_value;
			return true;
		}
	}
	return false;
}

/* The address's file offset, from the loadable segment that maps it. */
static int to_offset(Elf *elf, uint64_t addr, uint64_t *ret)
{
	size_t n;
	if (elf_getphdrnum(elf, &n) != 0)
		return -ENOEXEC;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (addr >= ph.p_vaddr && addr < ph.p_vaddr + ph.p_memsz) {
			*ret = addr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

static int search(Elf *elf, const char *path, const char *name, struct elfsym *ret,
		  struct lat_error *err)
{
	uint64_t value = 0;
	bool found = false;
	Elf_Scn *scn = NULL;

	ret->stripped = true;
	for (int pass = 0; pass < 2 && !found; pass++) {
		const unsigned want = pass == 0 ? SHT_SYMTAB : SHT_DYNSYM;
		scn = NULL;
		while (!found && (scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != want)
				continue;
			if (want == SHT_SYMTAB)
				ret->stripped = false;
			found = find_in(elf, scn, &sh, name, &value);
		}
	}
	if (!found)
		return err_set(err, -ENOENT, "%s has no function %s%s", path, name,
			       ret->stripped
				       ? " (it is stripped: no symbol table, only what it exports)"
				       : "");
	if (to_offset(elf, value, &ret->offset) < 0)
		return err_set(err, -ENOENT,
			       "%s: function %s is at an address no executable segment maps", path,
			       name);
	return 0;
}

int elfsym_find(const char *path, const char *name, struct elfsym *ret, struct lat_error *err)
{
	*ret = (struct elfsym){ 0 };
	if (elf_version(EV_CURRENT) == EV_NONE)
		return err_set(err, -ENOTSUP, "libelf: %s", elf_errmsg(-1));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(err, -errno, "cannot read %s: %s", path, strerror(errno));
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	int r;
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		r = err_set(err, -ENOEXEC, "%s is not an ELF file", path);
	else
		r = search(elf, path, name, ret, err);
	if (elf)
		elf_end(elf);
	close(fd);
	return r;
}
