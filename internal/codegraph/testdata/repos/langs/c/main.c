#include "list.h"

int main(void)
{
	list_t l = {0};
	list_push(&l, 1);
	return l.len;
}
