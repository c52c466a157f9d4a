// go_cgo.go - e2e target: a Go program that calls C (cgo) from goroutines
// whose stacks grow (test e2e.patched_go_program, built there with the go
// tool).  Go's runtime moves a goroutine's stack as it grows, walking its
// frames by its own tables: a return address it does not know stops the
// program ("unknown pc").  It prints the sum of what it computed.
package main

/*
static int cwork(int n) { volatile int s = 0; for (int i = 0; i < n; i++) s += i; return s; }
*/
import "C"

import (
	"fmt"
	"sync"
)

// deep recurses n levels with a frame big enough that the stack must grow.
func deep(n int) int {
	var pad [256]byte
	pad[n%256] = byte(n)
	if n == 0 {
		return int(C.cwork(100)) + int(pad[0])
	}
	return deep(n-1) + int(pad[n%256]&1)
}

func main() {
	var wg sync.WaitGroup
	sums := make([]int, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				sums[g] += deep(200 + 50*g)
			}
		}(g)
	}
	wg.Wait()
	t := 0
	for _, s := range sums {
		t += s
	}
	fmt.Println("go cgo", t)
}
