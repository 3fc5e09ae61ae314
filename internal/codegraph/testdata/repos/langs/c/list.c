#include <stdlib.h>
#include "list.h"

#define LIST_MAX 64

struct node {
	int value;
	struct node *next;
};

typedef struct list {
	struct node *head;
	int len;
} list_t;

enum color { RED, GREEN };

static struct node *node_new(int value)
{
	struct node *n = malloc(sizeof *n);
	n->value = value;
	n->next = NULL;
	return n;
}

int list_push(list_t *l, int value)
{
	struct node *n = node_new(value);
	n->next = l->head;
	l->head = n;
	return ++l->len;
}
