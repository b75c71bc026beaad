const fs=require('fs');const dir=process.argv[2];const f=fs.readdirSync(dir).find(x=>x.endsWith('.cpuprofile'));const p=JSON.parse(fs.readFileSync(dir+'/'+f));
const self=new Map();const dt=p.timeDeltas;const nodes=new Map(p.nodes.map(n=>[n.id,n]));let tot=0;
for(let i=0;i<p.samples.length;i++){const n=nodes.get(p.samples[i]);const c=n.callFrame;const k=(c.functionName||'(anon)')+' '+c.url.split('/').slice(-2).join('/')+':'+c.lineNumber;const d=(dt[i+1]||0)/1000;self.set(k,(self.get(k)||0)+d);tot+=d;}
console.log('total ms',tot.toFixed(0));[...self].sort((a,b)=>b[1]-a[1]).slice(0,14).forEach(([k,v])=>console.log((100*v/tot).toFixed(1)+'%',k));
