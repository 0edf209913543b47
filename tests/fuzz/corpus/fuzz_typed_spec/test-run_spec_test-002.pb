
swarm