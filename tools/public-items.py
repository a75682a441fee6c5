#!/usr/bin/env python3
"""Count the named public items a program outside the crate can reach.

Usage:
    cargo +nightly rustdoc --lib -- -Z unstable-options --output-format json
    python3 tools/public-items.py target/doc/ostledb.json

Walks rustdoc's JSON from the crate root: public modules and their items, re-exports,
the fields of reachable types and the methods of their inherent impls (enum variants,
which rustdoc gives no visibility of their own, trait impls and blanket impls are not
counted). Prints the count and the count by kind.
"""
import json,collections,sys
d=json.load(open(sys.argv[1]))
idx=d['index']; root=str(d['root'])
seen=set()
def walk(i):
    i=str(i)
    if i in seen or i not in idx: return
    it=idx[i]
    if it['crate_id']!=0: return
    seen.add(i)
    inner=it['inner']; k=next(iter(inner))
    body=inner[k]
    if k=='module':
        for c in body['items']: walk(c)
    elif k=='use':
        if body.get('id') is not None: walk(body['id'])
    elif k in('struct','enum','trait','union'):
        for imp in body.get('impls',[]): walk(imp)
        if k=='enum':
            for v in body['variants']: walk(v)
        if k=='struct':
            kk=body['kind']
            if isinstance(kk,dict) and 'plain' in kk:
                for f in kk['plain']['fields']: walk(f)
            if isinstance(kk,dict) and 'tuple' in kk:
                for f in kk['tuple']: 
                    if f is not None: walk(f)
        if k=='trait':
            for c in body['items']: walk(c)
    elif k=='impl':
        if not body.get('is_synthetic') and body.get('blanket_impl') is None and body.get('trait') is None:
            for c in body['items']: walk(c)
walk(root)
named=[i for i in seen if idx[i].get('name') and idx[i]['visibility']=='public' and next(iter(idx[i]['inner']))!='use']
c=collections.Counter(next(iter(idx[i]['inner'])) for i in named)
print(len(named), dict(c.most_common()))
