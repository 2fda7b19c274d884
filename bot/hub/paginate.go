package hub

import "github.com/google/go-github/v60/github"

// collect reads every page of a go-github list call, 100 items a page: fetch asks for one page
// (its options' Page set to page), keep turns each item into the caller's type. It is the one
// pagination loop of the adapter.
func collect[Item, Out any](opts *github.ListOptions, fetch func() ([]Item, *github.Response, error), keep func(Item) []Out) ([]Out, error) {
	opts.PerPage = 100
	var out []Out
	for {
		page, resp, err := fetch()
		if err != nil {
			return nil, err
		}
		for _, it := range page {
			out = append(out, keep(it)...)
		}
		if resp == nil || resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

func one[T any](v T) []T { return []T{v} }
