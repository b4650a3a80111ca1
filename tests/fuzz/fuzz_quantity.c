/* libFuzzer target: the resource quantity parser on arbitrary text, and its invariants:
 * both roundings accept and refuse the same texts (apart from the range of int64), and a
 * value in thousandths is never more than a thousand times the value in units. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/quantity.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	int64_t milli = 0, value = 0;
	int rm, rv;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	rm = tj_quantity_parse_milli(text, &milli);
	rv = tj_quantity_parse_value(text, &value);
	if ((rm == -EINVAL) != (rv == -EINVAL))
		abort();
	if (rm == 0 && rv != 0)
		abort(); /* a value that fits in thousandths fits in units */
	/* Rounded up without adding 999 first, which overflows near INT64_MAX. */
	if (rm == 0 && milli > 0 && milli / 1000 + (milli % 1000 != 0) != value)
		abort();
	free(text);
	return 0;
}
