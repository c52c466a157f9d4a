/*
 * sym_fde.c - the code range around an address from a module's call-frame
 * information, for the functions of a stripped program, which have no
 * symbol: every x86_64 compiler writes an FDE per function (and per part
 * split off, NAME.cold), and the linker a table of them sorted by start
 * address (.eh_frame_hdr, found by its PT_GNU_EH_FRAME program header).
 * libdw finds the FDE of an address, but tells only the range of one row
 * of its rules; this reads the table and the FDE's own range.  Everything
 * read is bounds-checked: the file may be anything.
 */
#include <dwarf.h>
#include <gelf.h>
#include <string.h>

#include "sym_fde.h"

/* Bytes [vaddr, vaddr + n) of the file's loaded image, or NULL. */
static const uint8_t *image_at(Elf *elf, uint64_t vaddr, size_t n)
{
	size_t nph;
	if (elf_getphdrnum(elf, &nph) != 0)
		return NULL;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD || vaddr < ph.p_vaddr ||
		    vaddr - ph.p_vaddr > ph.p_filesz || n > ph.p_filesz - (vaddr - ph.p_vaddr))
			continue;
		Elf_Data *d = elf_getdata_rawchunk(elf, (int64_t)(ph.p_offset + (vaddr - ph.p_vaddr)), n, ELF_T_BYTE);
		return d && d->d_size == n ? d->d_buf : NULL;
	}
	return NULL;
}

/* A little-endian value of n bytes at p. */
static uint64_t le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/* Size of a value in the pointer encoding enc (the forms compilers use),
 * and whether it is signed; 0 for one not handled. */
static int enc_size(uint8_t enc, int *is_signed)
{
	*is_signed = 0;
	switch (enc & 0x0f) {
	case DW_EH_PE_absptr: return 8;
	case DW_EH_PE_udata2: return 2;
	case DW_EH_PE_udata4: return 4;
	case DW_EH_PE_udata8: return 8;
	case DW_EH_PE_sdata2: *is_signed = 1; return 2;
	case DW_EH_PE_sdata4: *is_signed = 1; return 4;
	case DW_EH_PE_sdata8: *is_signed = 1; return 8;
	}
	return 0;
}

static uint64_t sext(uint64_t v, int size, int is_signed)
{
	if (is_signed && size < 8 && (v >> (8 * size - 1)) & 1)
		v |= ~0ull << (8 * size);
	return v;
}

/* A ULEB128 at *p (before end); 0 past the end, which the caller sees as
 * *p == NULL. */
static uint64_t uleb(const uint8_t **p, const uint8_t *end)
{
	uint64_t v = 0;
	for (int shift = 0; *p && *p < end && shift < 64; shift += 7) {
		uint8_t b = *(*p)++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	*p = NULL;
	return 0;
}

/* The encoding of an FDE's addresses, from its CIE at vaddr (its 'R'
 * augmentation; absptr without one); -1 if it cannot be read. */
static int cie_fde_encoding(Elf *elf, uint64_t vaddr)
{
	const uint8_t *h = image_at(elf, vaddr, 4);
	if (!h)
		return -1;
	uint64_t len = le(h, 4);
	if (len < 8 || len > 4096) /* (a CIE is a few dozen bytes) */
		return -1;
	const uint8_t *c = image_at(elf, vaddr + 4, (size_t)len);
	if (!c || le(c, 4) != 0) /* CIE id 0 in .eh_frame */
		return -1;
	const uint8_t *p = c + 5, *end = c + len; /* past the id and the version */
	uint8_t version = c[4];
	const char *aug = (const char *)p;
	const uint8_t *nul = memchr(p, 0, (size_t)(end - p));
	if (!nul)
		return -1;
	p = nul + 1;
	if (version >= 4)
		p += 2; /* address and segment sizes */
	if (p > end)
		return -1;
	uleb(&p, end); /* code alignment */
	uleb(&p, end); /* data alignment (the same bytes as an SLEB128) */
	if (p && version == 1)
		p = p < end ? p + 1 : NULL;
	else if (p)
		uleb(&p, end); /* return address register */
	if (!p || aug[0] != 'z')
		return p ? DW_EH_PE_absptr : -1;
	uleb(&p, end); /* augmentation data length */
	for (const char *a = aug + 1; *a && p && p < end; a++) {
		int is_signed, size;
		switch (*a) {
		case 'R': return *p;
		case 'L': p++; break;
		case 'P':
			size = enc_size(*p, &is_signed);
			if (!size || p + 1 + size > end)
				return -1;
			p += 1 + size;
			break;
		case 'S': case 'B': break;
		default: return -1;
		}
	}
	return DW_EH_PE_absptr;
}

int sym_fde_range(Elf *elf, uint64_t addr, uint64_t *start, uint64_t *end)
{
	size_t nph;
	if (!elf || elf_getphdrnum(elf, &nph) != 0)
		return -1;
	uint64_t hdr = 0, hsize = 0;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME) {
			hdr = ph.p_vaddr;
			hsize = ph.p_filesz;
		}
	}
	/* version 1, then the encodings of the .eh_frame pointer, the count
	 * and the table; the table as the linker writes it: pairs of signed
	 * 4-byte offsets from the header (datarel sdata4), sorted */
	const uint8_t *h = hsize >= 12 && hsize <= (1ull << 30) ? image_at(elf, hdr, (size_t)hsize) : NULL;
	if (!h || h[0] != 1 || h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return -1;
	int is_signed, psize = enc_size(h[1], &is_signed), csize = enc_size(h[2], &is_signed);
	if (!psize || !csize || (size_t)(4 + psize + csize) > hsize)
		return -1;
	uint64_t count = sext(le(h + 4 + psize, csize), csize, is_signed);
	const uint8_t *table = h + 4 + psize + csize;
	if (count == 0 || count > (hsize - (uint64_t)(table - h)) / 8)
		return -1;
	/* the last entry starting at or before addr */
	uint64_t lo = 0, hi = count;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (hdr + sext(le(table + 8 * mid, 4), 4, 1) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return -1;
	uint64_t s = hdr + sext(le(table + 8 * (lo - 1), 4), 4, 1);
	uint64_t fde = hdr + sext(le(table + 8 * (lo - 1) + 4, 4), 4, 1);
	/* the FDE: length, CIE pointer (back from this field), its start
	 * address, its length */
	const uint8_t *f = image_at(elf, fde, 8);
	if (!f || le(f, 4) == 0xffffffffu || le(f, 4) < 4)
		return -1;
	int enc = cie_fde_encoding(elf, fde + 4 - le(f + 4, 4));
	int size = enc >= 0 ? enc_size((uint8_t)enc, &is_signed) : 0;
	if (!size || le(f, 4) < 4 + 2 * (uint64_t)size)
		return -1;
	const uint8_t *r = image_at(elf, fde + 8, 2 * (size_t)size);
	if (!r)
		return -1;
	uint64_t begin = sext(le(r, size), size, is_signed);
	if ((enc & 0x70) == DW_EH_PE_pcrel)
		begin += fde + 8;
	else if ((enc & 0x70) != DW_EH_PE_absptr)
		return -1;
	uint64_t range = sext(le(r + size, size), size, is_signed);
	if (begin != s)
		return -1; /* the table and the FDE disagree */
	if (addr - s >= range)
		return -1; /* in no FDE's range: code without call-frame information */
	*start = s;
	*end = s + range;
	return 0;
}
