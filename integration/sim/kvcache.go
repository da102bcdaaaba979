package sim

// kvBlock is one physical KV block.
type kvBlock struct {
	hash       uint64 // engine hash of its content, valid when hashed
	ref        int32  // sequences using it
	prev, next int32  // free-list links (-1 = none)
	hashed     bool   // registered in the prefix cache
	free       bool   // in the free list
}

// kvCache is a paged KV cache with prefix caching (vLLM V1's block pool): blocks with no user
// sit in a free list, least recently freed first; allocation takes the head and, if it still
// caches a prefix, evicts it (logged for a BlockRemoved event).
type kvCache struct {
	blocks     []kvBlock
	head, tail int32
	nfree      int
	cached     map[uint64]int32
	log        *opLog
}

func newKVCache(n int, log *opLog) *kvCache {
	c := &kvCache{blocks: make([]kvBlock, n), head: -1, tail: -1, cached: make(map[uint64]int32, n), log: log}
	for i := range c.blocks {
		c.blocks[i].prev, c.blocks[i].next = -1, -1
		c.pushTail(int32(i))
	}
	return c
}

func (c *kvCache) pushTail(b int32) {
	k := &c.blocks[b]
	k.prev, k.next, k.free = c.tail, -1, true
	if c.tail >= 0 {
		c.blocks[c.tail].next = b
	} else {
		c.head = b
	}
	c.tail = b
	c.nfree++
}

func (c *kvCache) unlink(b int32) {
	k := &c.blocks[b]
	if k.prev >= 0 {
		c.blocks[k.prev].next = k.next
	} else {
		c.head = k.next
	}
	if k.next >= 0 {
		c.blocks[k.next].prev = k.prev
	} else {
		c.tail = k.prev
	}
	k.prev, k.next, k.free = -1, -1, false
	c.nfree--
}

// allocate takes the least recently freed block (nfree must be > 0), evicting its prefix.
func (c *kvCache) allocate() int32 {
	b := c.head
	c.unlink(b)
	k := &c.blocks[b]
	if k.hashed {
		delete(c.cached, k.hash)
		k.hashed = false
		if c.log != nil {
			c.log.removed(k.hash)
		}
	}
	k.ref = 1
	return b
}

// acquire adds a user to a cached block, taking it out of the free list.
func (c *kvCache) acquire(b int32) {
	k := &c.blocks[b]
	if k.free {
		c.unlink(b)
	}
	k.ref++
}

// release drops a user; a block without users joins the free list's tail.
func (c *kvCache) release(b int32) {
	k := &c.blocks[b]
	k.ref--
	if k.ref == 0 {
		c.pushTail(b)
	}
}

// lookup returns the block caching hash h.
func (c *kvCache) lookup(h uint64) (int32, bool) {
	b, ok := c.cached[h]
	return b, ok
}

// register makes block b the cached block of hash h (h must not be cached).
func (c *kvCache) register(b int32, h uint64) {
	k := &c.blocks[b]
	k.hash, k.hashed = h, true
	c.cached[h] = b
}

// used is the number of blocks with a user.
func (c *kvCache) used() int { return len(c.blocks) - c.nfree }
